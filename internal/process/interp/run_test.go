package interp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mockpartner"
	"github.com/orchd/orchd/internal/soap"
)

// TestPurchaseOrderWithoutEngine runs the example purchase order with the
// interpreter alone: no engine, no registry, no store. Its partner links
// are bound, as an engine's deploy binds them, to SOAP clients of the
// real CRM and ERP mock partners on loopback; the request is the
// workload's. The run completes, both partners were called once, and the
// reply carries what they answered.
func TestPurchaseOrderWithoutEngine(t *testing.T) {
	p := loadPO(t)
	mp := mockpartner.New(nil)
	crm, erp := httptest.NewServer(mp.CRM()), httptest.NewServer(mp.ERP())
	defer crm.Close()
	defer erp.Close()
	client := soap.NewClient(soap.ClientOptions{})
	for _, pl := range p.Plist {
		if pl.PartnerEP == nil {
			continue
		}
		ep := *pl.PartnerEP
		switch pl.Name {
		case "crm":
			ep.Address = crm.URL
		case "erp":
			ep.Address = erp.URL
		default:
			t.Fatalf("unexpected partner link %s", pl.Name)
		}
		p.Partners[pl.Idx] = client.Partner(&ep)
	}
	ep := p.Endpoints[0]
	var op *exchange.Operation
	for _, o := range ep.Operations {
		if o.Name == "submitPurchaseOrder" {
			op = o
		}
	}
	if op == nil {
		t.Fatal("the PO serves no submitPurchaseOrder")
	}
	req := exchange.NewMessage(op.Input.Name)
	req.Parts["payload"] = poMessage(t, "po-request.xml")
	var reply *exchange.Message
	var fault *exchange.Fault
	answers := 0
	ex := &exchange.Exchange{Endpoint: ep, Operation: op, Input: req, Respond: func(out *exchange.Message, f *exchange.Fault) {
		answers++
		reply, fault = out, f
	}}

	in := NewInstance(testHost{}, p, context.Background())
	out := in.Begin(Delivery{Ex: ex})
	if out.Result != ResCompleted || out.Answer != nil {
		t.Fatalf("run ended %v (%v), want completed", out.Result, out.Answer)
	}
	if answers != 1 || fault != nil || reply == nil {
		t.Fatalf("%d answers, fault %v, reply %v; want one reply", answers, fault, reply)
	}
	doc := etree.NewDocument()
	doc.SetRoot(reply.Parts["payload"].Copy())
	s, _ := doc.WriteToString()
	for _, want := range []string{"PO-000123", "CRM-00000001", "WO-00000001"} {
		if !strings.Contains(s, want) {
			t.Errorf("reply lacks %s:\n%s", want, s)
		}
	}
}
