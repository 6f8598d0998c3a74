package soap

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// callRecorder is a partner on loopback that keeps the body of each
// request it gets and answers 202 (a one-way operation's answer).
type callRecorder struct {
	srv    *httptest.Server
	bodies chan []byte
}

func newCallRecorder(t *testing.T) *callRecorder {
	t.Helper()
	r := &callRecorder{bodies: make(chan []byte, 4)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.bodies <- b
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// call invokes the one-way notify operation of ep (at the recorder)
// with call's ReplyTo and headers, and returns the body the partner got.
func (r *callRecorder) call(t *testing.T, ep *exchange.Endpoint, replyTo *exchange.EndpointReference, headers ...*etree.Element) []byte {
	t.Helper()
	ep.Address = r.srv.URL + "/partner"
	op := ep.Operations[1]
	in := exchange.NewMessage(op.Input.Name)
	in.Parts["n"] = mustElement(t, `<n:notification xmlns:n="urn:example:po"/>`)
	if _, err := NewClient(ClientOptions{}).Partner(ep).Invoke(context.Background(), &exchange.Call{Operation: op, Input: in, Headers: headers, ReplyTo: replyTo}); err != nil {
		t.Fatal(err)
	}
	return <-r.bodies
}

// messageIDs matches the random part of a wsa:MessageID, and the
// recorder's port.
var (
	messageIDs = regexp.MustCompile(`urn:uuid:[0-9a-f-]{36}`)
	ports      = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
)

// normalized is body with its MessageIDs and loopback port fixed.
func normalized(body []byte) []byte {
	return ports.ReplaceAll(messageIDs.ReplaceAll(body, []byte("urn:uuid:MESSAGE-ID")), []byte("127.0.0.1:PORT"))
}

// callCases are the partner endpoints whose calls without a ReplyTo
// are compared with testdata/calls (made before Call.ReplyTo existed).
func callCases(t *testing.T) map[string]func() (*exchange.Endpoint, []*etree.Element) {
	return map[string]func() (*exchange.Endpoint, []*etree.Element){
		"plain": func() (*exchange.Endpoint, []*etree.Element) { return wsaEndpoint(), nil },
		"addressing": func() (*exchange.Endpoint, []*etree.Element) {
			ep := wsaEndpoint()
			ep.Addressing = true
			return ep, []*etree.Element{mustElement(t, `<h:trace xmlns:h="urn:h">1</h:trace>`)}
		},
		"reference-params": func() (*exchange.Endpoint, []*etree.Element) {
			ep := wsaEndpoint()
			ep.ReferenceParams = []*etree.Element{mustElement(t, `<c:conversation xmlns:c="urn:example:conv">C-1</c:conversation>`)}
			return ep, nil
		},
	}
}

// TestCallWithoutReplyToUnchanged: a call without Call.ReplyTo is byte
// for byte what it was before ReplyTo existed (testdata/calls, the
// MessageID and port normalized), with and without WS-Addressing; a
// ReplyTo on a call to a partner that speaks no WS-Addressing is not
// sent either. ORCHD_UPDATE_GOLDEN=1 rewrites the files.
func TestCallWithoutReplyToUnchanged(t *testing.T) {
	rec := newCallRecorder(t)
	for name, mk := range callCases(t) {
		t.Run(name, func(t *testing.T) {
			ep, hs := mk()
			got := normalized(rec.call(t, ep, nil, hs...))
			file := filepath.Join("testdata", "calls", name+".xml")
			if os.Getenv("ORCHD_UPDATE_GOLDEN") == "1" {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the call changed:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestCallReplyTo: a call with Call.ReplyTo to a partner that speaks
// WS-Addressing carries wsa:ReplyTo after its MessageID, holding the
// address and the reference parameters (the partner reads them back as
// the EPR it is to call, parseEPR), and is otherwise the call without
// it; without reference parameters the EPR has no
// wsa:ReferenceParameters. To a partner without WS-Addressing the
// ReplyTo is not sent.
func TestCallReplyTo(t *testing.T) {
	rec := newCallRecorder(t)
	sess := mustElement(t, `<odesession:session xmlns:odesession="http://www.apache.org/ode/type/session">42</odesession:session>`)
	replyTo := &exchange.EndpointReference{Address: "http://orchd.example/processes/Caller", ReferenceParams: []*etree.Element{sess}}
	for name, mk := range callCases(t) {
		t.Run(name, func(t *testing.T) {
			ep, hs := mk()
			body := rec.call(t, ep, replyTo, hs...)
			want, err := os.ReadFile(filepath.Join("testdata", "calls", name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			env, err := DecodeEnvelope(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			h, ok := header(env, NSWSA, "ReplyTo")
			if name == "plain" {
				if ok || !bytes.Equal(normalized(body), want) {
					t.Errorf("a ReplyTo to a partner without WS-Addressing changed the call:\n%s", body)
				}
				return
			}
			if !ok {
				t.Fatalf("no wsa:ReplyTo:\n%s", body)
			}
			epr, err := parseEPR(h)
			if err != nil {
				t.Fatal(err)
			}
			if epr.Address != replyTo.Address || len(epr.Params) != 1 || epr.Params[0].Tag != "session" ||
				epr.Params[0].NamespaceURI() != "http://www.apache.org/ode/type/session" || epr.Params[0].Text() != "42" {
				t.Errorf("ReplyTo read back as %+v:\n%s", epr, body)
			}
			block := `<wsa:ReplyTo xmlns:wsa="` + NSWSA + `"><wsa:Address>http://orchd.example/processes/Caller</wsa:Address>` +
				`<wsa:ReferenceParameters><odesession:session xmlns:odesession="http://www.apache.org/ode/type/session">42</odesession:session></wsa:ReferenceParameters></wsa:ReplyTo>`
			after := []byte(`urn:uuid:MESSAGE-ID</wsa:MessageID>`)
			got := normalized(body)
			if !bytes.Contains(got, append(after, block...)) {
				t.Fatalf("wsa:ReplyTo not right after the MessageID, or not as expected:\n%s", got)
			}
			if without := bytes.Replace(got, []byte(block), nil, 1); !bytes.Equal(without, want) {
				t.Errorf("the call with a ReplyTo differs from the one without by more than the ReplyTo:\n got %s\nwant %s", without, want)
			}
		})
	}
	ep := wsaEndpoint()
	ep.Addressing = true
	body := rec.call(t, ep, &exchange.EndpointReference{Address: "http://orchd.example/cb"})
	env, err := DecodeEnvelope(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	h, ok := header(env, NSWSA, "ReplyTo")
	if !ok || len(h.ChildElements()) != 1 || h.ChildElements()[0].Tag != "Address" {
		t.Errorf("a ReplyTo without reference parameters, want wsa:Address alone:\n%s", body)
	}
}
