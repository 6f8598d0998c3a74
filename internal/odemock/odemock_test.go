package odemock

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/soap"
)

func typedParts(names ...string) *exchange.MessageDesc {
	d := &exchange.MessageDesc{}
	for _, n := range names {
		d.Parts = append(d.Parts, exchange.PartDesc{Name: n, Type: exchange.QName{Space: "http://www.w3.org/2001/XMLSchema", Local: "string"}})
	}
	return d
}

func message(kv ...string) *exchange.Message {
	m := exchange.NewMessage(exchange.QName{})
	for i := 0; i < len(kv); i += 2 {
		el := etree.NewElement(kv[i])
		el.SetText(kv[i+1])
		m.Parts[kv[i]] = el
	}
	return m
}

// The partners answer orchd's own SOAP client, over loopback HTTP, as the
// corpus's processes call them (document/literal, type-typed parts).
func TestPartnersOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := soap.NewClient(soap.ClientOptions{})

	probeOp := &exchange.Operation{Name: "probe", PortType: ProbePortType,
		Input: typedParts("probeName", "probeData"), Output: typedParts("probeName", "probeData")}
	for _, v := range []exchange.SOAPVersion{exchange.SOAP11, exchange.SOAP12} {
		p := client.Partner(&exchange.Endpoint{Address: s.ProbeURL, Version: v, Operations: []*exchange.Operation{probeOp}})
		out, err := p.Invoke(ctx, &exchange.Call{Operation: probeOp, Input: message("probeName", "step 2", "probeData", "a -> b")})
		if err != nil {
			t.Fatalf("SOAP %d probe: %v", v, err)
		}
		if got := out.Part("probeData").Text(); got != "a -> b -> step 2" {
			t.Fatalf("probeData = %q", got)
		}
		if got := out.Part("probeName").Text(); got != "step 2" {
			t.Fatalf("probeName = %q", got)
		}
	}

	faultOp := &exchange.Operation{Name: "throwFault", PortType: FaultPortType,
		Input: typedParts("faultName", "faultData", "faultIndicator1", "faultIndicator2"), Output: typedParts("faultName", "faultData", "faultIndicator1", "faultIndicator2"),
		Faults: map[string]*exchange.MessageDesc{"FaultMessage1": typedParts("errorID", "errorText")}}
	p := client.Partner(&exchange.Endpoint{Address: s.FaultURL, Version: exchange.SOAP11, Operations: []*exchange.Operation{faultOp}})
	for _, tc := range []struct{ i1, i2, want string }{{"yes", "yes", "FaultMessage1"}, {"no", "yes", "FaultMessage2"}, {"no", "no", "UnKnownFault"}} {
		_, err := p.Invoke(ctx, &exchange.Call{Operation: faultOp, Input: message("faultName", "f", "faultData", "data-"+tc.want, "faultIndicator1", tc.i1, "faultIndicator2", tc.i2)})
		var declared *exchange.Fault
		if _, ok := faultOp.Faults[tc.want]; ok {
			// A declared fault named by its faultcode becomes that fault,
			// its detail the message's parts.
			if !errors.As(err, &declared) || declared.Name.Local != tc.want || declared.Message.Part("errorText").Text() != "data-"+tc.want {
				t.Fatalf("indicators %s/%s: err = %v, want declared fault %s with its errorText", tc.i1, tc.i2, err, tc.want)
			}
			continue
		}
		// An undeclared one is still a fault, named by its faultcode.
		if !errors.As(err, &declared) || declared.Name != (exchange.QName{Space: "http://ode/bpel/unit-test/FaultService.wsdl", Local: tc.want}) {
			t.Fatalf("indicators %s/%s: err = %v, want fault {http://ode/bpel/unit-test/FaultService.wsdl}%s", tc.i1, tc.i2, err, tc.want)
		}
	}
}

// The fault's detail carries errorID and errorText.
func TestFaultDetail(t *testing.T) {
	var b strings.Builder
	a := fault(&request{parts: map[string]string{"faultData": "x < y", "faultIndicator2": "yes"}})
	var bb bytes.Buffer
	if err := encodeFault(&bb, exchange.SOAP11, a); err != nil {
		t.Fatal(err)
	}
	env, err := soap.DecodeEnvelope(strings.NewReader(bb.String()))
	if err != nil {
		t.Fatal(err)
	}
	f := env.Fault()
	if f == nil || f.CodeValue != "fs:FaultMessage2" || len(f.Detail) != 2 {
		t.Fatalf("fault = %+v", f)
	}
	b.WriteString(f.Detail[0].Text() + "|" + f.Detail[1].Text())
	if b.String() != "FA-1|x < y" {
		t.Fatalf("detail = %q", b.String())
	}
}
