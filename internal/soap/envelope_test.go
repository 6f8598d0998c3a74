package soap

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	nsPO   = "urn:example:po"
	nsCalc = "urn:example:calc"
)

// poOp is the document/literal purchase-order operation.
func poOp() *exchange.Operation {
	return &exchange.Operation{
		Name:     "submitPurchaseOrder",
		PortType: exchange.QName{Space: nsPO, Local: "poPortType"},
		Action:   "urn:example:po#submitPurchaseOrder",
		Style:    exchange.Document,
		Input: &exchange.MessageDesc{Name: exchange.QName{Space: nsPO, Local: "poRequest"},
			Parts: []exchange.PartDesc{{Name: "order", Element: exchange.QName{Space: nsPO, Local: "purchaseOrder"}}}},
		Output: &exchange.MessageDesc{Name: exchange.QName{Space: nsPO, Local: "poResponse"},
			Parts: []exchange.PartDesc{{Name: "ack", Element: exchange.QName{Space: nsPO, Local: "purchaseOrderAck"}}}},
		Faults: map[string]*exchange.MessageDesc{
			"invalidOrder": {Name: exchange.QName{Space: nsPO, Local: "invalidOrderMsg"},
				Parts: []exchange.PartDesc{{Name: "detail", Element: exchange.QName{Space: nsPO, Local: "orderFault"}}}},
		},
	}
}

// notifyOp is a one-way document/literal operation.
func notifyOp() *exchange.Operation {
	return &exchange.Operation{
		Name:     "notify",
		PortType: exchange.QName{Space: nsPO, Local: "poPortType"},
		Action:   "urn:example:po#notify",
		Style:    exchange.Document,
		Input: &exchange.MessageDesc{Name: exchange.QName{Space: nsPO, Local: "notification"},
			Parts: []exchange.PartDesc{{Name: "n", Element: exchange.QName{Space: nsPO, Local: "notification"}}}},
	}
}

// addOp is an rpc/literal operation with a type-typed and an element-typed
// part.
func addOp() *exchange.Operation {
	xsdInt := exchange.QName{Space: nsXSD, Local: "int"}
	return &exchange.Operation{
		Name:      "add",
		PortType:  exchange.QName{Space: nsCalc, Local: "calc"},
		Action:    "urn:example:calc#add",
		Style:     exchange.RPC,
		Namespace: nsCalc,
		Input: &exchange.MessageDesc{Name: exchange.QName{Space: nsCalc, Local: "addRequest"},
			Parts: []exchange.PartDesc{
				{Name: "a", Type: xsdInt},
				{Name: "b", Element: exchange.QName{Space: nsCalc, Local: "operand"}},
			}},
		Output: &exchange.MessageDesc{Name: exchange.QName{Space: nsCalc, Local: "addResponse"},
			Parts: []exchange.PartDesc{{Name: "sum", Type: xsdInt}}},
	}
}

// mustElement parses s into a detached, self-contained element.
func mustElement(t testing.TB, s string) *etree.Element {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(s); err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	root := doc.Root()
	root.Remove()
	return root
}

// xmlString serializes el alone.
func xmlString(t testing.TB, el *etree.Element) string {
	t.Helper()
	doc := etree.NewDocumentWithRoot(el.Copy())
	s, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update to accept):\n got: %s\nwant: %s", name, got, want)
	}
}

func TestDecodeEnvelope(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		version exchange.SOAPVersion
		headers int
		body    []string // serialized body elements
	}{{
		name: "soap11 prefix on envelope",
		in: `<soapenv:Envelope xmlns:soapenv="` + NS11 + `" xmlns:po="urn:example:po" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <soapenv:Header><po:trace>1</po:trace></soapenv:Header>
  <soapenv:Body><po:purchaseOrder xsi:type="po:PO"><po:poId>1</po:poId></po:purchaseOrder></soapenv:Body>
</soapenv:Envelope>`,
		version: exchange.SOAP11,
		headers: 1,
		body: []string{`<po:purchaseOrder xsi:type="po:PO" xmlns:soapenv="` + NS11 +
			`" xmlns:po="urn:example:po" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><po:poId>1</po:poId></po:purchaseOrder>`},
	}, {
		name:    "soap12 default namespace on body, redeclared prefix kept",
		in:      `<e:Envelope xmlns:e="` + NS12 + `" xmlns:p="urn:outer"><e:Body xmlns="urn:dflt"><a xmlns:p="urn:inner"><p:b/></a><c/></e:Body></e:Envelope>`,
		version: exchange.SOAP12,
		body: []string{
			`<a xmlns:p="urn:inner" xmlns="urn:dflt" xmlns:e="` + NS12 + `"><p:b/></a>`,
			`<c xmlns="urn:dflt" xmlns:e="` + NS12 + `" xmlns:p="urn:outer"/>`,
		},
	}, {
		name:    "empty body",
		in:      `<Envelope xmlns="` + NS11 + `"><Body/></Envelope>`,
		version: exchange.SOAP11,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := DecodeEnvelope(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if env.Version != tt.version {
				t.Errorf("version = %d, want %d", env.Version, tt.version)
			}
			if len(env.Headers) != tt.headers {
				t.Errorf("headers = %d, want %d", len(env.Headers), tt.headers)
			}
			if len(env.Body) != len(tt.body) {
				t.Fatalf("body has %d elements, want %d", len(env.Body), len(tt.body))
			}
			for i, b := range env.Body {
				if b.Parent() != nil {
					t.Errorf("body[%d] still attached", i)
				}
				if got := xmlString(t, b); got != tt.body[i] {
					t.Errorf("body[%d] =\n%s\nwant\n%s", i, got, tt.body[i])
				}
			}
		})
	}
}

// TestSelfContained checks that a body element using a prefix declared only
// on the Envelope serializes alone into XML that resolves the same names.
func TestSelfContained(t *testing.T) {
	in := `<S:Envelope xmlns:S="` + NS11 + `" xmlns:po="urn:example:po"><S:Body><po:order><po:id>7</po:id></po:order></S:Body></S:Envelope>`
	env, err := DecodeEnvelope(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	env.Body[0].WriteTo(&buf, &etree.WriteSettings{})
	again := mustElement(t, buf.String())
	if got := qnameOf(again); got != (exchange.QName{Space: nsPO, Local: "order"}) {
		t.Errorf("reparsed root is %s", got)
	}
	if got := qnameOf(again.ChildElements()[0]); got.Space != nsPO {
		t.Errorf("reparsed child is %s", got)
	}
}

func TestDecodeEnvelopeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
		text string
	}{
		{"empty", "", ErrMalformed, "empty"},
		{"not xml", "hello", ErrMalformed, "text outside"},
		{"only comment", "<!-- x -->", ErrMalformed, "no document element"},
		{"unclosed", "<a>\n<b>\n</a>", ErrMalformed, "line 3"},
		{"syntax", "<a>\n<b x=>\n</a>", ErrMalformed, "line 2"},
		{"two roots", `<a/><b/>`, ErrMalformed, "more than one"},
		{"not envelope", `<Foo xmlns="` + NS11 + `"/>`, ErrNotEnvelope, "Foo"},
		{"wrong namespace", `<Envelope xmlns="urn:nope"><Body/></Envelope>`, ErrVersionMismatch, "urn:nope"},
		{"no body", `<Envelope xmlns="` + NS11 + `"><Header/></Envelope>`, ErrNoBody, ""},
		{"two bodies", `<Envelope xmlns="` + NS11 + `"><Body><a/></Body><Body><b/></Body></Envelope>`, ErrMalformed, "child 2 <Body> after the Body"},
		{"two bodies 1.2", `<Envelope xmlns="` + NS12 + `"><Header/><Body/><Body/></Envelope>`, ErrMalformed, "child 3 <Body> after the Body"},
		{"junk before the body", `<Envelope xmlns="` + NS11 + `"><x:junk xmlns:x="urn:x"/><Body/></Envelope>`, ErrMalformed, "child 1 <{urn:x}junk> before the Body"},
		{"header after the body", `<Envelope xmlns="` + NS11 + `"><Body/><Header/></Envelope>`, ErrMalformed, "child 2 <Header> after the Body"},
		{"two headers", `<Envelope xmlns="` + NS11 + `"><Header/><Header/><Body/></Envelope>`, ErrMalformed, "child 2 <Header> before the Body"},
		{"junk after the body", `<Envelope xmlns="` + NS11 + `"><Body/><x:t xmlns:x="urn:x"/></Envelope>`, ErrMalformed, "child 2 <{urn:x}t> after the Body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeEnvelope(strings.NewReader(tt.in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %q, want it to mention %q", err, tt.text)
			}
		})
	}
}

func TestMessageRoundTrip(t *testing.T) {
	po := mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"><po:poId>PO-1</po:poId></po:purchaseOrder>`)
	ack := mustElement(t, `<po:purchaseOrderAck xmlns:po="urn:example:po"><po:status>ACCEPTED</po:status></po:purchaseOrderAck>`)
	a := mustElement(t, `<a>2</a>`)
	b := mustElement(t, `<c:operand xmlns:c="urn:example:calc">3</c:operand>`)
	sum := mustElement(t, `<sum xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xsd:int" xmlns:xsd="http://www.w3.org/2001/XMLSchema">5</sum>`)
	tests := []struct {
		name     string
		golden   string
		version  exchange.SOAPVersion
		op       *exchange.Operation
		response bool
		parts    map[string]*etree.Element
		headers  []*etree.Element
	}{
		{"doc request 1.1", "doc-request-11.xml", exchange.SOAP11, poOp(), false, map[string]*etree.Element{"order": po},
			[]*etree.Element{mustElement(t, `<h:trace xmlns:h="urn:h">x</h:trace>`)}},
		{"doc response 1.2", "doc-response-12.xml", exchange.SOAP12, poOp(), true, map[string]*etree.Element{"ack": ack}, nil},
		{"rpc request 1.1", "rpc-request-11.xml", exchange.SOAP11, addOp(), false, map[string]*etree.Element{"a": a, "b": b}, nil},
		{"rpc response 1.2", "rpc-response-12.xml", exchange.SOAP12, addOp(), true, map[string]*etree.Element{"sum": sum}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desc := tt.op.Input
			if tt.response {
				desc = tt.op.Output
			}
			before := map[string]string{}
			for n, el := range tt.parts {
				before[n] = xmlString(t, el)
			}
			msg := &exchange.Message{Name: desc.Name, Parts: tt.parts}
			var buf bytes.Buffer
			if err := encodeMessage(&buf, tt.version, tt.op, desc, msg, tt.headers, tt.response); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, buf.Bytes())
			env, err := DecodeEnvelope(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if env.Version != tt.version || len(env.Headers) != len(tt.headers) {
				t.Errorf("version %d headers %d", env.Version, len(env.Headers))
			}
			got, err := decodeMessage(tt.op, desc, env, tt.response)
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != desc.Name || len(got.Parts) != len(tt.parts) {
				t.Fatalf("decoded %v with %d parts", got.Name, len(got.Parts))
			}
			for n, el := range tt.parts {
				if s := xmlString(t, el); s != before[n] {
					t.Errorf("encoding changed part %s: %s", n, s)
				}
				if el.Parent() != nil {
					t.Errorf("encoding re-parented part %s", n)
				}
				g := got.Parts[n]
				if qnameOf(g) != qnameOf(el) || g.Text() != el.Text() || len(g.ChildElements()) != len(el.ChildElements()) {
					t.Errorf("part %s = %s, want %s", n, xmlString(t, g), before[n])
				}
			}
		})
	}
}

func TestDecodeMessageErrors(t *testing.T) {
	tests := []struct {
		name string
		op   *exchange.Operation
		body string
		text string
	}{
		{"doc missing part", poOp(), `<x:other xmlns:x="urn:x"/>`, "missing part order"},
		{"doc extra element", poOp(), `<po:purchaseOrder xmlns:po="urn:example:po"/><po:extra xmlns:po="urn:example:po"/>`, "unexpected body element"},
		{"rpc wrong wrapper", addOp(), `<c:sub xmlns:c="urn:example:calc"/>`, "rpc wrapper"},
		{"rpc missing accessor", addOp(), `<c:add xmlns:c="urn:example:calc"><a>1</a></c:add>`, "missing part accessor b"},
		{"rpc accessor without element", addOp(), `<c:add xmlns:c="urn:example:calc"><a>1</a><b>2</b></c:add>`, "must hold element"},
		{"rpc extra accessor", addOp(), `<c:add xmlns:c="urn:example:calc"><a>1</a><b><c:operand>2</c:operand></b><z/></c:add>`, "unexpected part accessor z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := DecodeEnvelope(strings.NewReader(`<s:Envelope xmlns:s="` + NS11 + `"><s:Body>` + tt.body + `</s:Body></s:Envelope>`))
			if err != nil {
				t.Fatal(err)
			}
			_, err = decodeMessage(tt.op, tt.op.Input, env, false)
			if !errors.Is(err, ErrMessage) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %v, want ErrMessage mentioning %q", err, tt.text)
			}
		})
	}
}

func TestEncodeFault(t *testing.T) {
	detail := []*etree.Element{mustElement(t, `<po:orderFault xmlns:po="urn:example:po"><po:why>no items</po:why></po:orderFault>`)}
	tests := []struct {
		golden  string
		version exchange.SOAPVersion
		code    FaultCode
		reason  string
		detail  []*etree.Element
	}{
		{"fault-client-11.xml", exchange.SOAP11, FaultClient, "bad <input> & such", nil},
		{"fault-server-11.xml", exchange.SOAP11, FaultServer, "invalidOrder: no items", detail},
		{"fault-sender-12.xml", exchange.SOAP12, FaultClient, "bad input", nil},
		{"fault-receiver-12.xml", exchange.SOAP12, FaultServer, "invalidOrder", detail},
		{"fault-versionmismatch-12.xml", exchange.SOAP12, FaultVersionMismatch, "wrong namespace", nil},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := EncodeFault(&buf, tt.version, tt.code, tt.reason, tt.detail); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, buf.Bytes())
			env, err := DecodeEnvelope(&buf)
			if err != nil {
				t.Fatal(err)
			}
			f := env.Fault()
			if f == nil {
				t.Fatal("no fault decoded")
			}
			if f.Code != tt.code || f.Reason != tt.reason || len(f.Detail) != len(tt.detail) {
				t.Errorf("decoded %+v", f)
			}
		})
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	po, err := os.ReadFile(filepath.Join("testdata", "po-request.xml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(po)
	f.Add([]byte(`<e:Envelope xmlns:e="` + NS12 + `"><e:Header><h xmlns="urn:h"/></e:Header><e:Body><a xmlns="urn:a"><b/></a><c/></e:Body></e:Envelope>`))
	f.Add([]byte(`<Envelope xmlns="` + NS11 + `"><Body><Fault><faultcode>Client</faultcode></Fault></Body></Envelope>`))
	f.Add([]byte(`<s:Envelope xmlns:s="` + NS11 + `" xmlns:p="urn:p"><s:Body><p:x p:a="1" xmlns:q="urn:q"><q:y/></p:x></s:Body></s:Envelope>`))
	f.Add([]byte(`<a><b></a>`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := DecodeEnvelope(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := EncodeEnvelope(&buf, env.Version, env.Headers, env.Body); err != nil {
			t.Fatal(err)
		}
		again, err := DecodeEnvelope(&buf)
		if err != nil {
			t.Fatalf("re-encoded envelope does not decode: %v\n%s", err, buf.String())
		}
		if len(again.Body) != len(env.Body) || len(again.Headers) != len(env.Headers) {
			t.Fatalf("body %d -> %d, headers %d -> %d", len(env.Body), len(again.Body), len(env.Headers), len(again.Headers))
		}
	})
}

func BenchmarkDecodeEncodePO(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "po-request.xml"))
	if err != nil {
		b.Fatal(err)
	}
	op := poOp()
	var buf bytes.Buffer
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		env, err := decodeEnvelopeBytes(data, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		msg, err := decodeMessage(op, op.Input, env, false)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		if err := encodeMessage(&buf, exchange.SOAP11, op, op.Input, msg, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}
