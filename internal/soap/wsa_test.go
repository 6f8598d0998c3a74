package soap

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// callbackSink is a listener on loopback that records the SOAP requests
// it gets (path, SOAPAction, envelope) and answers 202.
type callbackSink struct {
	srv *httptest.Server
	got chan sinkRequest
}

type sinkRequest struct {
	path, action string
	env          *Envelope
	body         string
}

func newCallbackSink(t *testing.T) *callbackSink {
	t.Helper()
	s := &callbackSink{got: make(chan sinkRequest, 8)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		env, _ := DecodeEnvelope(bytes.NewReader(b))
		s.got <- sinkRequest{path: r.URL.Path, action: r.Header.Get("SOAPAction"), env: env, body: string(b)}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// next returns the next request the sink got, failing the test when
// none comes within a few seconds (a callback never sent).
func (s *callbackSink) next(t *testing.T) sinkRequest {
	t.Helper()
	select {
	case r := <-s.got:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no callback arrived")
	}
	return sinkRequest{}
}

// header returns the text of the header block {ns}local of env, and
// whether there is one.
func header(env *Envelope, ns, local string) (*etree.Element, bool) {
	for _, h := range env.Headers {
		if h.Tag == local && h.NamespaceURI() == ns {
			return h, true
		}
	}
	return nil, false
}

// lockedBuffer is a log destination the server's goroutines write to and
// the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wsaPORequest is the purchase order with WS-Addressing headers hdrs in
// namespace ns (prefix wsa).
func wsaPORequest(t *testing.T, ns, id, hdrs string) string {
	t.Helper()
	req := poRequest(t, id)
	return strings.Replace(req, "<soapenv:Header/>", `<soapenv:Header xmlns:wsa="`+ns+`">`+hdrs+`</soapenv:Header>`, 1)
}

// wsaEndpoint is the purchase-order endpoint with WS-Addressing actions.
func wsaEndpoint() *exchange.Endpoint {
	ep := poEndpoint()
	po := ep.Operations[0]
	po.InputAction = "urn:example:po:poPortType:submitPurchaseOrderRequest"
	po.OutputAction = "urn:example:po:poPortType:submitPurchaseOrderResponse"
	po.FaultActions = map[string]string{"invalidOrder": "urn:example:po:poPortType:submitPurchaseOrder:Fault:invalidOrder"}
	return ep
}

// TestReplyToCallback: a request whose wsa:ReplyTo is not anonymous gets
// HTTP 202 with no body, and its reply arrives at the ReplyTo address
// (a listener on loopback the partner policy allows) with wsa:To,
// wsa:Action, wsa:RelatesTo = the request's MessageID, a new MessageID
// and the EPR's reference parameters as header blocks; a declared fault
// goes to the FaultTo address with the fault's action. Both WS-Addressing
// namespaces.
func TestReplyToCallback(t *testing.T) {
	sink := newCallbackSink(t)
	allow, err := ParsePartnerPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerOptions{Callbacks: NewClient(ClientOptions{Policy: allow})})
	if err := s.Handle(wsaEndpoint(), &testDispatcher{}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()

	for _, tc := range []struct {
		name, ns, id  string
		path, action  string
		wantParam     bool // the reference parameter is marked IsReferenceParameter
		wantRootLocal string
	}{
		{"reply 2005/08", NSWSA, "PO-1", "/replies", "urn:example:po:poPortType:submitPurchaseOrderResponse", true, "purchaseOrderAck"},
		{"reply 2004/08", NSWSA2004, "PO-2", "/replies", "urn:example:po:poPortType:submitPurchaseOrderResponse", false, "purchaseOrderAck"},
		{"fault to FaultTo", NSWSA, "FAULT", "/faults", "urn:example:po:poPortType:submitPurchaseOrder:Fault:invalidOrder", true, "Fault"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgID := "urn:uuid:request-" + tc.id
			hdrs := `<wsa:To soapenv:mustUnderstand="1">` + hs.URL + `/po</wsa:To>` +
				`<wsa:Action>urn:example:po#submitPurchaseOrder</wsa:Action>` +
				`<wsa:MessageID>` + msgID + `</wsa:MessageID>` +
				`<wsa:ReplyTo><wsa:Address>` + sink.srv.URL + `/replies</wsa:Address>` +
				`<wsa:ReferenceParameters><c:conversation xmlns:c="urn:example:conv">C-` + tc.id + `</c:conversation></wsa:ReferenceParameters></wsa:ReplyTo>` +
				`<wsa:FaultTo><wsa:Address>` + sink.srv.URL + `/faults</wsa:Address>` +
				`<wsa:ReferenceParameters><c:conversation xmlns:c="urn:example:conv">C-` + tc.id + `</c:conversation></wsa:ReferenceParameters></wsa:FaultTo>`
			r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, tc.ns, tc.id, hdrs))
			if r.status != http.StatusAccepted || r.body != "" {
				t.Fatalf("HTTP %d %q, want 202 and no body", r.status, r.body)
			}
			cb := sink.next(t)
			if cb.env == nil {
				t.Fatalf("callback is no envelope: %s", cb.body)
			}
			if cb.path != tc.path || cb.action != `"`+tc.action+`"` {
				t.Errorf("callback to %s with SOAPAction %s, want %s and %q", cb.path, cb.action, tc.path, tc.action)
			}
			for local, want := range map[string]string{"To": sink.srv.URL + tc.path, "RelatesTo": msgID, "Action": tc.action} {
				if h, ok := header(cb.env, tc.ns, local); !ok || h.Text() != want {
					t.Errorf("wsa:%s missing or not %q:\n%s", local, want, cb.body)
				}
			}
			if h, ok := header(cb.env, tc.ns, "MessageID"); !ok || !strings.HasPrefix(h.Text(), "urn:uuid:") || h.Text() == msgID {
				t.Errorf("wsa:MessageID missing or not new:\n%s", cb.body)
			}
			conv, ok := header(cb.env, "urn:example:conv", "conversation")
			if !ok || conv.Text() != "C-"+tc.id {
				t.Fatalf("reference parameter not sent as a header block:\n%s", cb.body)
			}
			marked := false
			for _, a := range conv.Attr {
				if a.Key == "IsReferenceParameter" && a.NamespaceURI() == NSWSA && a.Value == "true" {
					marked = true
				}
			}
			if marked != tc.wantParam {
				t.Errorf("IsReferenceParameter marker %v, want %v:\n%s", marked, tc.wantParam, cb.body)
			}
			if len(cb.env.Body) != 1 || cb.env.Body[0].Tag != tc.wantRootLocal {
				t.Errorf("callback body, want <%s>:\n%s", tc.wantRootLocal, cb.body)
			}
		})
	}
}

// TestFaultToOnly: with an anonymous ReplyTo and a FaultTo elsewhere, a
// reply comes on the HTTP response and a fault goes to the FaultTo
// address, the client getting 202 for it.
func TestFaultToOnly(t *testing.T) {
	sink := newCallbackSink(t)
	allow, err := ParsePartnerPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerOptions{Callbacks: NewClient(ClientOptions{Policy: allow})})
	if err := s.Handle(wsaEndpoint(), &testDispatcher{}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	hdrs := `<wsa:MessageID>urn:uuid:f-1</wsa:MessageID><wsa:FaultTo><wsa:Address>` + sink.srv.URL + `/faults</wsa:Address></wsa:FaultTo>`
	r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, "PO-11", hdrs))
	if r.status != http.StatusOK || r.env == nil || len(r.env.Body) != 1 || r.env.Body[0].Tag != "purchaseOrderAck" {
		t.Fatalf("reply: HTTP %d, want it on the response:\n%s", r.status, r.body)
	}
	r = post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, "FAULT", hdrs))
	if r.status != http.StatusAccepted || r.body != "" {
		t.Fatalf("fault: HTTP %d %q, want 202", r.status, r.body)
	}
	cb := sink.next(t)
	if cb.path != "/faults" || cb.env == nil || cb.env.Fault() == nil {
		t.Fatalf("fault callback to %s, want a fault at /faults:\n%s", cb.path, cb.body)
	}
	if h, ok := header(cb.env, NSWSA, "RelatesTo"); !ok || h.Text() != "urn:uuid:f-1" {
		t.Errorf("fault callback without RelatesTo:\n%s", cb.body)
	}
	// An undeclared failure (no reply, a server error) goes there too.
	r = post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, "SERVER", hdrs))
	if r.status != http.StatusAccepted {
		t.Fatalf("server error: HTTP %d, want 202:\n%s", r.status, r.body)
	}
	if cb := sink.next(t); cb.env == nil || cb.env.Fault() == nil || !strings.Contains(cb.env.Fault().Reason, "database on fire") {
		t.Errorf("server error callback, want its fault:\n%s", cb.body)
	}
}

// TestReplyToAnonymous: an anonymous ReplyTo (or none), and a request
// without WS-Addressing, are answered on the HTTP response; the reply to
// a WS-Addressing request relates to its MessageID, the other carries no
// wsa header.
func TestReplyToAnonymous(t *testing.T) {
	_, hs, _ := newTestServer(t, ServerOptions{})
	anon := `<wsa:MessageID>urn:uuid:m-1</wsa:MessageID><wsa:ReplyTo><wsa:Address>` + wsaAnonymous + `</wsa:Address></wsa:ReplyTo>`
	for _, tc := range []struct {
		name, body string
		relates    bool
	}{
		{"anonymous", wsaPORequest(t, NSWSA, "PO-3", anon), true},
		{"no ReplyTo", wsaPORequest(t, NSWSA, "PO-4", `<wsa:MessageID>urn:uuid:m-1</wsa:MessageID>`), true},
		{"no WS-Addressing", poRequest(t, "PO-5"), false},
	} {
		r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", `"urn:example:po#submitPurchaseOrder"`, tc.body)
		if r.status != http.StatusOK || r.env == nil || len(r.env.Body) != 1 || r.env.Body[0].Tag != "purchaseOrderAck" {
			t.Fatalf("%s: HTTP %d, want the reply:\n%s", tc.name, r.status, r.body)
		}
		h, ok := header(r.env, NSWSA, "RelatesTo")
		if ok != tc.relates || (ok && h.Text() != "urn:uuid:m-1") {
			t.Errorf("%s: wsa:RelatesTo %v, want %v:\n%s", tc.name, ok, tc.relates, r.body)
		}
		if !tc.relates && len(r.env.Headers) != 0 {
			t.Errorf("%s: reply has header blocks:\n%s", tc.name, r.body)
		}
	}
}

// TestReplyToRefused: a ReplyTo address the partner address policy
// forbids (loopback, by default) is never called, whatever the request
// said; without Callbacks a non-anonymous ReplyTo is refused with
// wsa:OnlyAnonymousAddressSupported; a ReplyTo that is no http URL is a
// Client fault.
func TestReplyToRefused(t *testing.T) {
	sink := newCallbackSink(t)
	var logs lockedBuffer
	s := NewServer(ServerOptions{Callbacks: NewClient(ClientOptions{}), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := s.Handle(wsaEndpoint(), &testDispatcher{}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	replyTo := func(addr string) string {
		return `<wsa:MessageID>urn:uuid:m-2</wsa:MessageID><wsa:ReplyTo><wsa:Address>` + addr + `</wsa:Address></wsa:ReplyTo>`
	}
	r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, "PO-6", replyTo(sink.srv.URL+"/replies")))
	if r.status != http.StatusAccepted {
		t.Fatalf("HTTP %d, want 202:\n%s", r.status, r.body)
	}
	waitFor(t, "the refused callback's log line", func() bool { return strings.Contains(logs.String(), "callback failed") })
	if !strings.Contains(logs.String(), ErrPartnerNotAllowed.Error()) {
		t.Errorf("the callback failed for another reason than the policy:\n%s", logs.String())
	}
	select {
	case cb := <-sink.got:
		t.Fatalf("a forbidden ReplyTo address was called: %s", cb.body)
	default:
	}

	r = post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, "PO-7", replyTo("mailto:x@example.com")))
	if f := r.fault(t); f.Code != FaultClient || !strings.Contains(f.Reason, "mailto:") {
		t.Errorf("ReplyTo mailto: fault %+v, want a Client fault naming it", f)
	}

	_, plain, _ := newTestServer(t, ServerOptions{})
	r = post(t, plain.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, "PO-8", replyTo(sink.srv.URL+"/replies")))
	if f := r.fault(t); f.Code != FaultClient || !strings.Contains(f.Reason, "OnlyAnonymousAddressSupported") {
		t.Errorf("no callbacks: fault %+v, want OnlyAnonymousAddressSupported", f)
	}
}

// TestWSAActionSelectsOperation: two operations take the same body
// element; without a SOAPAction, the request's wsa:Action picks one.
func TestWSAActionSelectsOperation(t *testing.T) {
	ep := wsaEndpoint()
	amend := *ep.Operations[0]
	amend.Name, amend.Action, amend.InputAction = "amendPurchaseOrder", "urn:example:po#amend", "urn:example:po:amend"
	ep.Operations = append(ep.Operations, &amend)
	var got string
	s := NewServer(ServerOptions{})
	d := dispatchFunc(func(ctx context.Context, ex *exchange.Exchange) error {
		got = ex.Operation.Name
		return (&testDispatcher{}).Dispatch(ctx, ex)
	})
	if err := s.Handle(ep, d); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	for _, action := range []string{"urn:example:po:amend", "urn:example:po:poPortType:submitPurchaseOrderRequest"} {
		got = ""
		r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", wsaPORequest(t, NSWSA, "PO-9", `<wsa:Action>`+action+`</wsa:Action>`))
		want := map[string]string{"urn:example:po:amend": "amendPurchaseOrder"}[action]
		if want == "" {
			want = "submitPurchaseOrder"
		}
		if r.status != http.StatusOK || got != want {
			t.Errorf("wsa:Action %s: HTTP %d, operation %q, want %s:\n%s", action, r.status, got, want, r.body)
		}
	}
	r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", poRequest(t, "PO-10"))
	if f := r.fault(t); !strings.Contains(f.Reason, "fits operations") && !strings.Contains(f.Reason, "offers") {
		t.Errorf("no action: fault %+v, want the ambiguity named", f)
	}
}

// FuzzAddressing parses the WS-Addressing headers of arbitrary envelopes:
// no panic, and what parses gives a reply's headers (with the reference
// parameters copied) that encode into an envelope that decodes again
// with the request's MessageID as RelatesTo.
func FuzzAddressing(f *testing.F) {
	f.Add([]byte(`<e:Envelope xmlns:e="` + NS11 + `" xmlns:wsa="` + NSWSA + `"><e:Header><wsa:MessageID>m</wsa:MessageID><wsa:ReplyTo><wsa:Address>http://h/c</wsa:Address><wsa:ReferenceParameters><c:x xmlns:c="urn:c">1</c:x></wsa:ReferenceParameters></wsa:ReplyTo></e:Header><e:Body/></e:Envelope>`))
	f.Add([]byte(`<e:Envelope xmlns:e="` + NS11 + `" xmlns:wsa="` + NSWSA2004 + `"><e:Header><wsa:FaultTo><wsa:Address/></wsa:FaultTo></e:Header><e:Body/></e:Envelope>`))
	f.Add([]byte(`<e:Envelope xmlns:e="` + NS12 + `"><e:Header><wsa:To xmlns:wsa="` + NSWSA + `" e:mustUnderstand="true">x</wsa:To></e:Header><e:Body/></e:Envelope>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := DecodeEnvelope(bytes.NewReader(data))
		if err != nil {
			return
		}
		wa, err := parseAddressing(env.Headers)
		if err != nil || wa == nil || wa.ReplyTo == nil {
			return
		}
		hs := addressingHeaders(wa.NS, wa.ReplyTo, "urn:a", wa.MessageID)
		var buf bytes.Buffer
		if err := EncodeEnvelope(&buf, env.Version, hs, nil); err != nil {
			t.Fatalf("encoding the reply's headers: %v", err)
		}
		back, err := DecodeEnvelope(&buf)
		if err != nil {
			t.Fatalf("the reply's headers do not decode: %v\n%s", err, buf.String())
		}
		if wa.MessageID != "" {
			h, ok := header(back, wa.NS, "RelatesTo")
			if !ok || strings.TrimSpace(h.Text()) != wa.MessageID {
				t.Fatalf("RelatesTo lost:\n%s", buf.String())
			}
		}
	})
}
