package soap

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

const nsSess = "urn:example:session"

var (
	sessionPart = exchange.PartDesc{Name: "session", Element: exchange.QName{Space: nsSess, Local: "session"}}
	tokenPart   = exchange.PartDesc{Name: "token", Type: exchange.QName{Space: nsXSD, Local: "string"}}
)

// hdrOp is the purchase-order operation with a session part in a SOAP
// header of its input and output, an optional type-typed token header in
// its input, and the session part declared first (so the body's first
// element is not the message's first part).
func hdrOp(style exchange.BindingStyle) *exchange.Operation {
	op := poOp()
	op.Style = style
	op.Namespace = nsPO
	order, ack := op.Input.Parts[0], op.Output.Parts[0]
	op.Input = &exchange.MessageDesc{Name: op.Input.Name, Parts: []exchange.PartDesc{sessionPart, order, tokenPart}}
	op.Output = &exchange.MessageDesc{Name: op.Output.Name, Parts: []exchange.PartDesc{ack, sessionPart}}
	op.InputParts = &exchange.SOAPParts{Body: []exchange.PartDesc{order},
		Headers: []exchange.HeaderPart{{PartDesc: sessionPart}, {PartDesc: tokenPart, Optional: true}}}
	op.OutputParts = &exchange.SOAPParts{Body: []exchange.PartDesc{ack}, Headers: []exchange.HeaderPart{{PartDesc: sessionPart}}}
	return op
}

// Header parts are written as header blocks (before other headers), not
// in the body, and read back from the Header, for document and rpc style.
func TestHeaderPartsRoundTrip(t *testing.T) {
	for _, style := range []exchange.BindingStyle{exchange.Document, exchange.RPC} {
		for _, response := range []bool{false, true} {
			op := hdrOp(style)
			desc, bodyPart := op.Input, "order"
			parts := map[string]*etree.Element{
				"session": mustElement(t, `<s:session xmlns:s="urn:example:session">S-1</s:session>`),
				"order":   mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"><po:poId>PO-1</po:poId></po:purchaseOrder>`),
				"token":   mustElement(t, `<token>tk</token>`),
			}
			if response {
				desc, bodyPart = op.Output, "ack"
				parts = map[string]*etree.Element{
					"session": parts["session"],
					"ack":     mustElement(t, `<po:purchaseOrderAck xmlns:po="urn:example:po"><po:status>OK</po:status></po:purchaseOrderAck>`),
				}
			}
			extra := mustElement(t, `<h:trace xmlns:h="urn:h">x</h:trace>`)
			var buf bytes.Buffer
			msg := &exchange.Message{Name: desc.Name, Parts: parts}
			if err := encodeMessage(&buf, exchange.SOAP11, op, desc, msg, []*etree.Element{extra}, response); err != nil {
				t.Fatal(err)
			}
			doc := etree.NewDocument()
			if err := doc.ReadFromBytes(buf.Bytes()); err != nil {
				t.Fatal(err)
			}
			hdr := doc.FindElement("/Envelope/Header")
			var names []string
			for _, h := range hdr.ChildElements() {
				names = append(names, h.Tag)
			}
			want := "session trace"
			if !response {
				want = "session token trace"
			}
			if strings.Join(names, " ") != want {
				t.Errorf("style %d response %v: header blocks %v, want %s\n%s", style, response, names, want, buf.String())
			}
			if doc.FindElement("/Envelope/Body//session") != nil || doc.FindElement("/Envelope/Body//token") != nil {
				t.Errorf("style %d response %v: a header part is in the body:\n%s", style, response, buf.String())
			}
			env, err := DecodeEnvelope(&buf)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeMessage(op, desc, env, response)
			if err != nil {
				t.Fatalf("style %d response %v: %v", style, response, err)
			}
			if s := got.Part("session"); s == nil || s.Text() != "S-1" || s.NamespaceURI() != nsSess {
				t.Errorf("style %d response %v: session part %v", style, response, s)
			}
			if got.Part(bodyPart) == nil || len(got.Parts) != len(parts) {
				t.Errorf("style %d response %v: decoded parts %v", style, response, got.Parts)
			}
			if len(env.Headers) != 1 || env.Headers[0].Tag != "trace" {
				t.Errorf("style %d response %v: headers left on the envelope %v, want only trace", style, response, env.Headers)
			}
		}
	}
}

func TestHeaderPartErrors(t *testing.T) {
	const order = `<po:purchaseOrder xmlns:po="urn:example:po"/>`
	tests := []struct {
		name   string
		header string
		body   string
		text   string // "" means no error
	}{
		{"required header missing", ``, order, "missing SOAP header part session (header block {urn:example:session}session)"},
		{"header in the body instead", ``, `<s:session xmlns:s="urn:example:session"/>` + order, "missing SOAP header part session"},
		{"optional header missing", `<s:session xmlns:s="urn:example:session"/>`, order, ""},
		{"header part left in the body too", `<s:session xmlns:s="urn:example:session"/>`, order + `<s:session xmlns:s="urn:example:session"/>`, "unexpected body element {urn:example:session}session"},
		{"header of another namespace", `<s:session xmlns:s="urn:other"/>`, order, "missing SOAP header part session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := DecodeEnvelope(strings.NewReader(`<s:Envelope xmlns:s="` + NS11 + `"><s:Header>` + tt.header + `</s:Header><s:Body>` + tt.body + `</s:Body></s:Envelope>`))
			if err != nil {
				t.Fatal(err)
			}
			op := hdrOp(exchange.Document)
			msg, err := decodeMessage(op, op.Input, env, false)
			if tt.text == "" {
				if err != nil || msg.Part("token") != nil || msg.Part("session") == nil {
					t.Errorf("err %v, parts %v", err, msg)
				}
				return
			}
			if !errors.Is(err, ErrMessage) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want ErrMessage mentioning %q", err, tt.text)
			}
		})
	}
	t.Run("encode without a required header part", func(t *testing.T) {
		op := hdrOp(exchange.Document)
		msg := &exchange.Message{Parts: map[string]*etree.Element{"ack": mustElement(t, `<po:purchaseOrderAck xmlns:po="urn:example:po"/>`)}}
		err := encodeMessage(&bytes.Buffer{}, exchange.SOAP11, op, op.Output, msg, nil, true)
		if !errors.Is(err, ErrMessage) || !strings.Contains(err.Error(), "no header part session") {
			t.Errorf("err = %v, want ErrMessage naming header part session", err)
		}
	})
}

func TestCheckUnderstood(t *testing.T) {
	mapped := &exchange.SOAPParts{Headers: []exchange.HeaderPart{{PartDesc: sessionPart}}}
	tests := []struct {
		name    string
		version exchange.SOAPVersion
		block   string // a header block; e: is bound to the envelope namespace
		missed  bool
	}{
		{"1.1 mustUnderstand=1", exchange.SOAP11, `<x:a xmlns:x="urn:x" e:mustUnderstand="1"/>`, true},
		{"1.1 mustUnderstand=0", exchange.SOAP11, `<x:a xmlns:x="urn:x" e:mustUnderstand="0"/>`, false},
		{"1.1 no mustUnderstand", exchange.SOAP11, `<x:a xmlns:x="urn:x"/>`, false},
		{"1.1 mustUnderstand in another namespace", exchange.SOAP11, `<x:a xmlns:x="urn:x" x:mustUnderstand="1"/>`, false},
		{"1.1 mapped header", exchange.SOAP11, `<s:session xmlns:s="urn:example:session" e:mustUnderstand="1"/>`, false},
		{"1.1 actor next", exchange.SOAP11, `<x:a xmlns:x="urn:x" e:mustUnderstand="1" e:actor="http://schemas.xmlsoap.org/soap/actor/next"/>`, true},
		{"1.1 another actor", exchange.SOAP11, `<x:a xmlns:x="urn:x" e:mustUnderstand="1" e:actor="urn:elsewhere"/>`, false},
		{"1.2 mustUnderstand=true", exchange.SOAP12, `<x:a xmlns:x="urn:x" e:mustUnderstand="true"/>`, true},
		{"1.2 mustUnderstand=false", exchange.SOAP12, `<x:a xmlns:x="urn:x" e:mustUnderstand="false"/>`, false},
		{"1.2 role ultimateReceiver", exchange.SOAP12, `<x:a xmlns:x="urn:x" e:mustUnderstand="1" e:role="http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver"/>`, true},
		{"1.2 role none", exchange.SOAP12, `<x:a xmlns:x="urn:x" e:mustUnderstand="1" e:role="http://www.w3.org/2003/05/soap-envelope/role/none"/>`, false},
		{"1.2 attributes of 1.1", exchange.SOAP12, `<x:a xmlns:x="urn:x" xmlns:o="` + NS11 + `" o:mustUnderstand="1"/>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := NS11
			if tt.version == exchange.SOAP12 {
				ns = NS12
			}
			env, err := DecodeEnvelope(strings.NewReader(`<e:Envelope xmlns:e="` + ns + `"><e:Header>` + tt.block + `</e:Header><e:Body/></e:Envelope>`))
			if err != nil {
				t.Fatal(err)
			}
			err = checkUnderstood(tt.version, poOp(), env.Headers, mapped)
			if got := errors.Is(err, ErrMustUnderstand); got != tt.missed {
				t.Errorf("checkUnderstood = %v, want a MustUnderstand error: %v", err, tt.missed)
			}
		})
	}
}

// The front door resolves an operation whose first part is a header part
// by its body element, hands the header part to the dispatcher inside the
// message and the other header blocks on the exchange, writes the reply's
// header part into the reply's Header, and answers an unmapped
// mustUnderstand block with a MustUnderstand fault (SOAP 1.2: with a
// NotUnderstood block).
func TestServerHeaderParts(t *testing.T) {
	for _, v := range []exchange.SOAPVersion{exchange.SOAP11, exchange.SOAP12} {
		ep := &exchange.Endpoint{Service: exchange.QName{Space: nsPO, Local: "hdr"}, Path: "/hdr", Version: v,
			Operations: []*exchange.Operation{hdrOp(exchange.Document)}}
		var others []string
		d := dispatchFunc(func(_ context.Context, ex *exchange.Exchange) error {
			others = others[:0]
			for _, h := range ex.Headers {
				others = append(others, h.Tag)
			}
			out := exchange.NewMessage(ex.Operation.Output.Name)
			out.Parts["ack"] = mustElementNoT(`<po:purchaseOrderAck xmlns:po="urn:example:po"/>`)
			out.Parts["session"] = ex.Input.Part("session")
			ex.Respond(out, nil)
			return nil
		})
		s := NewServer(ServerOptions{})
		if err := s.Handle(ep, d); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)
		defer hs.Close()
		ns, ct := NS11, "text/xml; charset=utf-8"
		if v == exchange.SOAP12 {
			ns, ct = NS12, "application/soap+xml; charset=utf-8"
		}
		request := func(headers string) string {
			return `<e:Envelope xmlns:e="` + ns + `" xmlns:s="urn:example:session"><e:Header>` + headers +
				`</e:Header><e:Body><po:purchaseOrder xmlns:po="urn:example:po"/></e:Body></e:Envelope>`
		}

		r := post(t, hs.URL+"/hdr", ct, "", request(`<s:session e:mustUnderstand="1">S-9</s:session><h:trace xmlns:h="urn:h"/>`))
		if r.status != http.StatusOK || r.env == nil || len(r.env.Headers) != 1 || r.env.Headers[0].Text() != "S-9" {
			t.Fatalf("SOAP %d: HTTP %d, want the session header echoed:\n%s", v, r.status, r.body)
		}
		if strings.Join(others, " ") != "trace" {
			t.Errorf("SOAP %d: exchange headers %v, want only trace", v, others)
		}

		r = post(t, hs.URL+"/hdr", ct, "", request(`<s:session>S-9</s:session><x:auth xmlns:x="urn:x" e:mustUnderstand="1"/>`))
		f := r.fault(t)
		if r.status != http.StatusInternalServerError || f.Code != FaultMustUnderstand || !strings.Contains(f.Reason, "{urn:x}auth") {
			t.Errorf("SOAP %d: HTTP %d fault %+v, want MustUnderstand naming {urn:x}auth", v, r.status, f)
		}
		if v == exchange.SOAP12 {
			if len(r.env.Headers) != 1 || r.env.Headers[0].Tag != "NotUnderstood" || r.env.Headers[0].SelectAttrValue("qname", "") != "nu:auth" {
				t.Errorf("SOAP 1.2 MustUnderstand fault without a NotUnderstood block:\n%s", r.body)
			}
		}
	}
}

// FuzzHeaderParts decodes arbitrary envelopes against an operation with
// header parts: no panic, and what decodes encodes into an envelope that
// decodes to the same parts.
func FuzzHeaderParts(f *testing.F) {
	f.Add([]byte(`<e:Envelope xmlns:e="` + NS11 + `" xmlns:s="urn:example:session"><e:Header><s:session e:mustUnderstand="1">S</s:session><token>t</token></e:Header><e:Body><po:purchaseOrder xmlns:po="urn:example:po"/></e:Body></e:Envelope>`))
	f.Add([]byte(`<e:Envelope xmlns:e="` + NS12 + `"><e:Header><x xmlns="urn:x" e:mustUnderstand="true" e:role="urn:r"/></e:Header><e:Body/></e:Envelope>`))
	f.Add([]byte(`<e:Envelope xmlns:e="` + NS11 + `"><e:Body><po:purchaseOrder xmlns:po="urn:example:po"/></e:Body></e:Envelope>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := DecodeEnvelope(bytes.NewReader(data))
		if err != nil {
			return
		}
		op := hdrOp(exchange.Document)
		if checkUnderstood(env.Version, op, env.Headers, op.InputParts) != nil {
			return
		}
		msg, err := decodeMessage(op, op.Input, env, false)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := encodeMessage(&buf, env.Version, op, op.Input, msg, env.Headers, false); err != nil {
			t.Fatal(err)
		}
		again, err := DecodeEnvelope(&buf)
		if err != nil {
			t.Fatalf("re-encoded envelope does not decode: %v\n%s", err, buf.String())
		}
		msg2, err := decodeMessage(op, op.Input, again, false)
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v\n%s", err, buf.String())
		}
		if len(msg2.Parts) != len(msg.Parts) {
			t.Fatalf("parts %d -> %d\n%s", len(msg.Parts), len(msg2.Parts), buf.String())
		}
	})
}
