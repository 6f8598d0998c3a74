package process

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/xpath1"
)

const nsTest = "urn:test"

// clientResult is what a client of a Dispatch saw.
type clientResult struct {
	out       *exchange.Message
	fault     *exchange.Fault
	err       error
	responses int
}

// deployBundle loads a fixture bundle and deploys it on a new engine.
func deployBundle(t testing.TB, name string, partners func(*exchange.Endpoint) exchange.Partner) (*Engine, []*interp.Version) {
	t.Helper()
	procs, err := loadBundle(filepath.Join(bundlesDir, name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	e := NewEngine(Options{Partners: partners})
	if err := e.Deploy(procs...); err != nil {
		t.Fatalf("deploy %s: %v", name, err)
	}
	return e, procs
}

// dispatch sends payload as the "payload" part of operation run of p's
// endpoint and records the response.
func dispatch(t testing.TB, e *Engine, p *interp.Version, payload *etree.Element) clientResult {
	t.Helper()
	ep := p.Endpoints[0]
	op := opNamed(ep, "run")
	if op == nil {
		t.Fatalf("process %s: no operation run", p)
	}
	in := exchange.NewMessage(op.Input.Name)
	in.Parts["payload"] = payload
	var r clientResult
	ex := &exchange.Exchange{Endpoint: ep, Operation: op, Input: in, Respond: func(m *exchange.Message, f *exchange.Fault) {
		r.responses++
		r.out, r.fault = m, f
	}}
	r.err = e.Dispatch(context.Background(), ex)
	return r
}

// testReq builds a self-contained tns:req.
func testReq(id, n, text string) *etree.Element {
	req := etree.NewElement("tns:req")
	req.CreateAttr("xmlns:tns", nsTest)
	req.CreateElement("tns:id").SetText(id)
	req.CreateElement("tns:n").SetText(n)
	req.CreateElement("tns:text").SetText(text)
	return req
}

// canon renders e with resolved names and without namespace declarations,
// so that two namespace-equivalent trees render the same:
// <{uri}local {uri}attr="v">children</>.
func canon(e *etree.Element) string {
	var b strings.Builder
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		fmt.Fprintf(&b, "<{%s}%s", e.NamespaceURI(), e.Tag)
		var attrs []string
		for _, a := range e.Attr {
			if xpath1.IsNSDecl(a) {
				continue
			}
			sp := ""
			if a.Space != "" {
				sp, _ = expr.LookupNS(e, a.Space)
				sp = "{" + sp + "}"
			}
			attrs = append(attrs, fmt.Sprintf(" %s%s=%q", sp, a.Key, a.Value))
		}
		sort.Strings(attrs)
		b.WriteString(strings.Join(attrs, ""))
		b.WriteString(">")
		for _, c := range e.Child {
			switch t := c.(type) {
			case *etree.Element:
				walk(t)
			case *etree.CharData:
				b.WriteString(t.Data)
			}
		}
		b.WriteString("</>")
	}
	walk(e)
	return b.String()
}

// checkSelfContained serializes e alone (as the root of a new document),
// re-parses it, and checks that every prefix resolves, to the namespace the
// name had in place: element and attribute names and xsi:type values.
func checkSelfContained(t testing.TB, e *etree.Element) {
	t.Helper()
	doc := etree.NewDocument()
	doc.SetRoot(e.Copy())
	s, err := doc.WriteToString()
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	re := etree.NewDocument()
	if err := re.ReadFromString(s); err != nil {
		t.Fatalf("re-parse %s: %v", s, err)
	}
	var walk func(orig, got *etree.Element)
	walk = func(orig, got *etree.Element) {
		uri, ok := expr.LookupNS(got, got.Space)
		if got.Space != "" && !ok {
			t.Errorf("prefix %q of <%s> is not declared in the serialized part:\n%s", got.Space, got.FullTag(), s)
		}
		if want := orig.NamespaceURI(); uri != want {
			t.Errorf("<%s> is in namespace %q alone, %q in place:\n%s", got.FullTag(), uri, want, s)
		}
		for _, a := range got.Attr {
			if xpath1.IsNSDecl(a) || a.Space == "" || a.Space == "xml" {
				continue
			}
			if _, ok := expr.LookupNS(got, a.Space); !ok {
				t.Errorf("prefix %q of attribute %s is not declared in the serialized part:\n%s", a.Space, a.FullKey(), s)
			}
			if a.Key == "type" {
				if i := strings.IndexByte(a.Value, ':'); i > 0 {
					p := a.Value[:i]
					u1, ok1 := expr.LookupNS(got, p)
					u2, _ := expr.LookupNS(orig, p)
					if !ok1 || u1 != u2 {
						t.Errorf("prefix %q of %s=%q resolves to %q (declared %v) alone, %q in place:\n%s", p, a.FullKey(), a.Value, u1, ok1, u2, s)
					}
				}
			}
		}
		oc, gc := orig.ChildElements(), got.ChildElements()
		if len(oc) != len(gc) {
			t.Fatalf("<%s>: %d children alone, %d in place", got.FullTag(), len(gc), len(oc))
		}
		for i := range oc {
			walk(oc[i], gc[i])
		}
	}
	walk(e, re.Root())
}

// recorder is a partner that records its calls and answers with answer.
type recorder struct {
	mu     sync.Mutex
	calls  []string // operation:id
	answer func(c *exchange.Call) (*exchange.Message, error)
}

func (r *recorder) bind(*exchange.Endpoint) exchange.Partner {
	return exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
		id := ""
		if p := c.Input.Part("payload"); p != nil {
			id = childText(p, "id")
		}
		r.mu.Lock()
		r.calls = append(r.calls, c.Operation.Name+":"+id)
		r.mu.Unlock()
		if r.answer == nil {
			return nil, nil
		}
		return r.answer(c)
	})
}

// partnerAnswer answers call with <tns:resp><tns:a>P-id</tns:a></tns:resp>,
// or the declared fault rejected (code R1) when the id is "reject".
func partnerAnswer(c *exchange.Call) (*exchange.Message, error) {
	id := childText(c.Input.Part("payload"), "id")
	if id == "reject" {
		p := etree.NewElement("tns:problem")
		p.CreateAttr("xmlns:tns", nsTest)
		p.CreateElement("tns:code").SetText("R1")
		m := exchange.NewMessage(exchange.QName{Space: nsTest, Local: "problem"})
		m.Parts["payload"] = p
		return nil, &exchange.Fault{Name: exchange.QName{Space: nsTest, Local: "rejected"}, Message: m, Reason: "rejected by partner"}
	}
	resp := etree.NewElement("r:resp")
	resp.CreateAttr("xmlns:r", nsTest)
	resp.CreateElement("r:a").SetText("P-" + id)
	m := exchange.NewMessage(c.Operation.Output.Name)
	m.Parts["payload"] = resp
	return m, nil
}

const (
	tnsResp = "{urn:test}resp"
	bpelNS  = "{http://docs.oasis-open.org/wsbpel/2.0/process/executable}"
)

// respCanon is the canonical form of a tns:resp with the given children
// (name, text pairs), all in urn:test.
func respCanon(kv ...string) string {
	var b strings.Builder
	b.WriteString("<" + tnsResp + ">")
	for i := 0; i < len(kv); i += 2 {
		fmt.Fprintf(&b, "<{urn:test}%s>%s</>", kv[i], kv[i+1])
	}
	b.WriteString("</>")
	return b.String()
}

func TestRuntime(t *testing.T) {
	tests := []struct {
		name    string
		bundle  string
		process string // process to call; "" for the only one
		input   *etree.Element
		answer  func(*exchange.Call) (*exchange.Message, error)

		// want: the reply's payload part in canonical form; or
		want string
		// wantFault: a fault reply (name and payload canonical form); or
		wantFault exchange.QName
		// wantReason is in the fault's reason when wantFaultData is empty.
		wantReason    string
		wantFaultData string
		// wantErr: Dispatch fails with these substrings and no response.
		wantErr []string
		// wantCalls: the partner calls, operation:id.
		wantCalls []string
	}{
		{
			name: "assign forms", bundle: "rt-assign", input: testReq("A-1", "3", "hello"),
			want: respCanon("a", "A-1", "b", "hello!", "c", "6", "d", "lit", "e", "hello", "f", "A-1"),
		},
		{
			name: "keepSrcElementName", bundle: "rt-keepsrc", input: testReq("A-1", "3", "hello"),
			want: `<{urn:test}resp><{urn:test}item kind="x">v</><{urn:test}slot2 kind="y">w</></>`,
		},
		{
			// The uninitialized part takes the declared element name
			// (tns:resp); the children keep their own namespace.
			name: "copy into uninitialized part", bundle: "rt-fresh-rename", input: testReq("A-1", "3", "hello"),
			want: `<{urn:test}resp><{urn:other}x>1</></>`,
		},
		{
			name: "ignoreMissingFromData", bundle: "rt-ignore-missing", input: testReq("A-1", "3", "hello"),
			want: respCanon("a", "default", "b", "default"),
		},
		{
			// An uncaught standard fault is answered by its spec name.
			name: "missing source is selectionFailure", bundle: "rt-missing-source", input: testReq("A-1", "3", "hello"),
			wantFault: exchange.QName{Space: bpelNS[1 : len(bpelNS)-1], Local: "selectionFailure"}, wantReason: "Test.bpel:25",
		},
		{
			// Each variable is a document: //tns:id on b finds b's id only,
			// /tns:req on a is a's document element, the ancestors of b's
			// id are b's element and its document node, and a's document
			// node has no parent (1 + 0 + 2).
			name: "variables are documents", bundle: "rt-docs", input: testReq("A-1", "3", "hello"),
			want: respCanon("a", "B", "b", "A-1", "c", "3", "d", "B"),
		},
		{name: "if", bundle: "rt-if", input: testReq("A-1", "9", ""), want: respCanon("a", "big")},
		{name: "elseif", bundle: "rt-if", input: testReq("A-1", "3", ""), want: respCanon("a", "medium")},
		{name: "elseif boundary", bundle: "rt-if", input: testReq("A-1", "5", ""), want: respCanon("a", "medium")},
		{name: "else", bundle: "rt-if", input: testReq("A-1", "1", ""), want: respCanon("a", "small")},
		{name: "while 3", bundle: "rt-while", input: testReq("A-1", "3", ""), want: respCanon("a", "123", "b", "3")},
		{name: "while 0", bundle: "rt-while", input: testReq("A-1", "0", ""), want: respCanon("a", "", "b", "0")},
		{name: "while 12", bundle: "rt-while", input: testReq("A-1", "12", ""), want: respCanon("a", "123456789101112", "b", "12")},
		{
			name: "inline variable initialization", bundle: "rt-init", input: testReq("A-1", "3", ""),
			want: respCanon("a", "init", "b", "hi there", "c", "40"),
		},
		{name: "catch with faultVariable", bundle: "rt-catch", input: testReq("A-1", "3", ""), want: respCanon("a", "caught E42")},
		{name: "catchAll", bundle: "rt-catchall", input: testReq("A-1", "3", ""), want: respCanon("a", "catchAll")},
		{
			name: "uncaught declared fault", bundle: "rt-declared-fault", input: testReq("A-1", "3", ""),
			wantFault: exchange.QName{Space: nsTest, Local: "oops"}, wantFaultData: `<{urn:test}problem><{urn:test}code>E42</></>`,
		},
		{
			name: "uncaught undeclared fault", bundle: "rt-undeclared-fault", input: testReq("A-1", "3", ""),
			wantFault: exchange.QName{Space: "urn:test", Local: "other"},
		},
		{
			// exit ends the instance before it replies: the client must
			// not be left with a success and no answer.
			name: "exit before reply", bundle: "rt-exit", input: testReq("A-1", "3", ""),
			wantFault: exchange.QName{Space: bpelNS[1 : len(bpelNS)-1], Local: "missingReply"}, wantReason: "exited",
		},
		{name: "getVariableProperty", bundle: "rt-varprop", input: testReq("ORD-7", "3", ""), want: respCanon("a", "ORD-7")},
		{
			// A pick creates the instance; a wait until a past date does
			// not wait.
			name: "instantiating pick, wait until", bundle: "rt-pick-create", input: testReq("A-7", "3", ""),
			want: respCanon("a", "picked:A-7"),
		},
		{
			name: "one-way invoke", bundle: "rt-oneway", input: testReq("A-1", "3", ""),
			want: respCanon("a", "sent"), wantCalls: []string{"notify:A-1"},
		},
		{
			name: "invoke", bundle: "rt-invoke", input: testReq("A-1", "3", ""), answer: partnerAnswer,
			want: respCanon("a", "ok:P-A-1"), wantCalls: []string{"call:A-1"},
		},
		{
			name: "partner fault caught by faultName", bundle: "rt-invoke", input: testReq("reject", "3", ""), answer: partnerAnswer,
			want: respCanon("a", "rejected:R1"), wantCalls: []string{"call:reject"},
		},
		{
			// The caller reaches the callee in process: no Options.Partners.
			name: "in-process call", bundle: "rt-call", process: "Caller", input: testReq("A-1", "3", ""),
			want: respCanon("a", "caller:callee:A-1"),
		},
		{
			name: "namespaces: default-namespace input", bundle: "rt-ns",
			input: func() *etree.Element {
				d := etree.NewDocument()
				if err := d.ReadFromString(`<req xmlns="urn:test"><id>A-1</id><n>3</n><text>hello</text></req>`); err != nil {
					panic(err)
				}
				return d.Root()
			}(),
			want: `<{urn:test}resp><{urn:test}a>A-1</><{urn:test}text>hello</>` +
				`<{urn:test}typed {http://www.w3.org/2001/XMLSchema-instance}type="xsd:string">t</>` +
				`<{urn:test}items><{urn:test}id>A-1</><{urn:test}n>3</><{urn:test}text>hello</></></>`,
		},
		{
			name: "namespaces: prefixed input", bundle: "rt-ns", input: testReq("A-1", "3", "hello"),
			want: `<{urn:test}resp><{urn:test}a>A-1</><{urn:test}text>hello</>` +
				`<{urn:test}typed {http://www.w3.org/2001/XMLSchema-instance}type="xsd:string">t</>` +
				`<{urn:test}items><{urn:test}id>A-1</><{urn:test}n>3</><{urn:test}text>hello</></></>`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{answer: tc.answer}
			partners := rec.bind
			if tc.bundle == "rt-call" {
				partners = func(ep *exchange.Endpoint) exchange.Partner {
					t.Errorf("Options.Partners called for %s: the callee is deployed in the same engine", ep.Service)
					return rec.bind(ep)
				}
			}
			e, procs := deployBundle(t, tc.bundle, partners)
			p := procs[0]
			for _, q := range procs {
				if q.Name.Local == tc.process {
					p = q
				}
			}
			r := dispatch(t, e, p, tc.input)
			switch {
			case tc.wantErr != nil:
				if r.err == nil {
					t.Fatalf("Dispatch succeeded (responses %d, out %v, fault %v), want an error with %q", r.responses, r.out, r.fault, tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(r.err.Error(), w) {
						t.Errorf("error %q does not contain %q", r.err, w)
					}
				}
				if r.responses != 0 {
					t.Errorf("%d responses with an error", r.responses)
				}
			case !tc.wantFault.IsZero():
				if r.err != nil || r.responses != 1 || r.fault == nil || r.out != nil {
					t.Fatalf("want one fault response: err=%v responses=%d out=%v fault=%v", r.err, r.responses, r.out, r.fault)
				}
				if r.fault.Name != tc.wantFault {
					t.Errorf("fault %s, want %s", r.fault.Name, tc.wantFault)
				}
				if tc.wantFaultData == "" {
					if !strings.Contains(r.fault.Reason, tc.wantReason) {
						t.Errorf("fault reason %q does not contain %q", r.fault.Reason, tc.wantReason)
					}
					return
				}
				data := r.fault.Message.Part("payload")
				if data == nil {
					t.Fatalf("fault without payload: %+v", r.fault.Message)
				}
				if got := canon(data); got != tc.wantFaultData {
					t.Errorf("fault payload\n got %s\nwant %s", got, tc.wantFaultData)
				}
				if r.fault.Message.Name != (exchange.QName{Space: nsTest, Local: "problem"}) {
					t.Errorf("fault message %s, want {urn:test}problem", r.fault.Message.Name)
				}
				checkSelfContained(t, data)
			default:
				if r.err != nil || r.responses != 1 || r.fault != nil || r.out == nil {
					t.Fatalf("want one reply: err=%v responses=%d out=%v fault=%v", r.err, r.responses, r.out, r.fault)
				}
				if r.out.Name != (exchange.QName{Space: nsTest, Local: "resp"}) {
					t.Errorf("reply message %s, want {urn:test}resp", r.out.Name)
				}
				part := r.out.Part("payload")
				if part == nil {
					t.Fatalf("reply without payload part")
				}
				if got := canon(part); got != tc.want {
					t.Errorf("reply payload\n got %s\nwant %s", got, tc.want)
				}
				checkSelfContained(t, part)
			}
			if strings.Join(rec.calls, ",") != strings.Join(tc.wantCalls, ",") {
				t.Errorf("partner calls %q, want %q", rec.calls, tc.wantCalls)
			}
		})
	}
}

// The example purchase order's ack and fault parts are self-contained.
func TestPurchaseOrderPartsSelfContained(t *testing.T) {
	e, p, _ := loadPO(t)
	out, fault, err := submit(t, e, p, poMessage(t, "po-request.xml"))
	if err != nil || fault != nil {
		t.Fatalf("err=%v fault=%v", err, fault)
	}
	checkSelfContained(t, out.Part("payload"))

	payload := poMessage(t, "po-request.xml")
	items := payload.FindElement("./items")
	for _, it := range items.ChildElements() {
		items.RemoveChild(it)
	}
	_, fault, err = submit(t, e, p, payload)
	if err != nil || fault == nil {
		t.Fatalf("err=%v fault=%v", err, fault)
	}
	checkSelfContained(t, fault.Message.Part("payload"))
}

// Instances of one process run concurrently without sharing state.
func TestRuntimeConcurrent(t *testing.T) {
	e, procs := deployBundle(t, "rt-while", nil)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			r := dispatch(t, e, procs[0], testReq("A", fmt.Sprint(n%5), ""))
			if r.err != nil || r.out == nil {
				t.Errorf("n=%d: err=%v", n%5, r.err)
				return
			}
			want := ""
			for k := 1; k <= n%5; k++ {
				want += fmt.Sprint(k)
			}
			if got := childText(r.out.Part("payload"), "a"); got != want {
				t.Errorf("n=%d: a=%q, want %q", n%5, got, want)
			}
		}(i)
	}
	wg.Wait()
}
