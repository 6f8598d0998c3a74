package exchange_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// A Partner answers a Call with a message or a declared fault; the runtime
// tells the two apart with errors.As.
func ExamplePartnerFunc() {
	op := &exchange.Operation{Name: "check", PortType: exchange.QName{Space: "urn:example", Local: "PT"},
		Output: &exchange.MessageDesc{Name: exchange.QName{Space: "urn:example", Local: "checkResponse"}}}
	partner := exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
		if c.Input.Part("payload").Text() == "" {
			return nil, &exchange.Fault{Name: c.Operation.FaultName("empty"), Reason: "nothing to check"}
		}
		out := exchange.NewMessage(c.Operation.Output.Name)
		ok := etree.NewElement("ok")
		ok.SetText(c.Input.Part("payload").Text())
		out.Parts["payload"] = ok
		return out, nil
	})
	for _, text := range []string{"PO-1", ""} {
		in := exchange.NewMessage(exchange.QName{Local: "check"})
		p := etree.NewElement("payload")
		p.SetText(text)
		in.Parts["payload"] = p
		out, err := partner.Invoke(context.Background(), &exchange.Call{Operation: op, Input: in})
		var f *exchange.Fault
		switch {
		case errors.As(err, &f):
			fmt.Println("fault", f.Name, f.Reason, exchange.KindOf(err) == exchange.KindServer)
		default:
			fmt.Println("reply", out.Part("payload").Text())
		}
	}
	fmt.Println(exchange.KindOf(exchange.ClientError("bad %s", "input")) == exchange.KindClient)
	// Output:
	// reply PO-1
	// fault {urn:example}empty nothing to check true
	// true
}
