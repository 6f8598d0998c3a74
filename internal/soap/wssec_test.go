package soap

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	"golang.org/x/crypto/bcrypt"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/wssec"
)

// syncBuffer is a log sink the server may write from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// securedServers serve the PO endpoint requiring a UsernameToken of ann
// (bcrypt of "ann-pw") or bob (plain "bob-pw"), over TLS and over plain
// HTTP.
func securedServers(t *testing.T) (tlsSrv, plain *httptest.Server, log *syncBuffer) {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("ann-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := wssec.ParseCredentials([]byte("ann:" + string(h) + "\nbob:{PLAIN}bob-pw\n"))
	if err != nil {
		t.Fatal(err)
	}
	log = &syncBuffer{}
	s := NewServer(ServerOptions{Logger: slog.New(slog.NewTextHandler(log, nil))})
	ep := poEndpoint()
	ep.Auth = wssec.NewAuthenticator(wssec.Policy{Credentials: creds, Text: true, Digest: true})
	if err := s.Handle(ep, &testDispatcher{}); err != nil {
		t.Fatal(err)
	}
	tlsSrv, plain = httptest.NewTLSServer(s), httptest.NewServer(s)
	t.Cleanup(tlsSrv.Close)
	t.Cleanup(plain.Close)
	return tlsSrv, plain, log
}

// securedRequest is a PO request whose header is what a Signer of
// user/pw makes at time at (none for an empty user).
func securedRequest(t *testing.T, user, pw string, digest bool, at time.Time) string {
	t.Helper()
	req := poRequest(t, "PO-7")
	if user == "" {
		return req
	}
	s := &wssec.Signer{User: user, Password: pw, Digest: digest, Now: func() time.Time { return at }}
	h, err := s.SecurityHeader(NS11)
	if err != nil {
		t.Fatal(err)
	}
	doc := etree.NewDocument()
	doc.SetRoot(h)
	hb, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req, "<soapenv:Header/>") {
		t.Fatalf("no empty Header in the request:\n%s", req)
	}
	return strings.Replace(req, "<soapenv:Header/>", "<soapenv:Header>"+hb+"</soapenv:Header>", 1)
}

func TestUsernameTokenInbound(t *testing.T) {
	tlsSrv, plain, log := securedServers(t)
	now := time.Now()
	replayed := securedRequest(t, "bob", "bob-pw", true, now)
	tests := []struct {
		name string
		srv  *httptest.Server
		body string
		ok   bool
	}{
		{"no token", plain, securedRequest(t, "", "", true, now), false},
		{"wrong digest", plain, securedRequest(t, "bob", "guess", true, now), false},
		{"stale digest", plain, securedRequest(t, "bob", "bob-pw", true, now.Add(-10*time.Minute)), false},
		{"right digest", plain, replayed, true},
		{"the same digest replayed", plain, replayed, false},
		{"right text over TLS (bcrypt)", tlsSrv, securedRequest(t, "ann", "ann-pw", false, now), true},
		{"wrong text over TLS", tlsSrv, securedRequest(t, "ann", "guess", false, now), false},
		{"right text over plain HTTP", plain, securedRequest(t, "ann", "ann-pw", false, now), false},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodPost, tt.srv.URL+"/po", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		r := doWith(t, tt.srv.Client(), req)
		if tt.ok {
			if r.status != http.StatusOK || !strings.Contains(r.body, "ACCEPTED") {
				t.Errorf("%s: HTTP %d %s, want the acknowledgment", tt.name, r.status, r.body)
			}
			continue
		}
		f := r.fault(t)
		if r.status != http.StatusInternalServerError || f.CodeName != (exchange.QName{Space: nsWSSE, Local: "FailedAuthentication"}) || f.Reason != failedAuthReason {
			t.Errorf("%s: HTTP %d fault %v %q, want 500 wsse:FailedAuthentication", tt.name, r.status, f.CodeName, f.Reason)
		}
	}
	out := log.String()
	for _, want := range []string{"wrong password", "stale", "replayed", "needs TLS", "no wsse:Security header"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not say %q:\n%s", want, out)
		}
	}
	for _, pw := range []string{"bob-pw", "ann-pw", "guess"} {
		if strings.Contains(out, pw) {
			t.Errorf("the log holds password %q:\n%s", pw, out)
		}
	}
}

// A partner's Security header reaches a server that authenticates it:
// both password types, through the Client.
func TestUsernameTokenOutbound(t *testing.T) {
	tlsSrv, plain, _ := securedServers(t)
	for _, tt := range []struct {
		name   string
		srv    *httptest.Server
		signer *wssec.Signer
		ok     bool
	}{
		{"digest", plain, &wssec.Signer{User: "bob", Password: "bob-pw", Digest: true}, true},
		{"text over TLS", tlsSrv, &wssec.Signer{User: "ann", Password: "ann-pw"}, true},
		{"wrong password", plain, &wssec.Signer{User: "bob", Password: "nope", Digest: true}, false},
	} {
		c := NewClient(ClientOptions{HTTPClient: tt.srv.Client()})
		po := poEndpoint()
		po.Address, po.Security = tt.srv.URL+"/po", tt.signer
		env, err := DecodeEnvelope(strings.NewReader(poRequest(t, "PO-8")))
		if err != nil {
			t.Fatal(err)
		}
		m := exchange.NewMessage(po.Operations[0].Input.Name)
		m.Parts["order"] = env.Body[0]
		for i := range 2 { // a new nonce each call: the second is no replay
			out, err := c.Partner(po).Invoke(context.Background(), &exchange.Call{Operation: po.Operations[0], Input: m})
			switch {
			case tt.ok && (err != nil || out.Part("ack").FindElement("poId").Text() != "PO-8"):
				t.Errorf("%s, call %d: %v", tt.name, i, err)
			case !tt.ok && (err == nil || !strings.Contains(err.Error(), "FailedAuthentication")):
				t.Errorf("%s, call %d: %v, want a FailedAuthentication fault", tt.name, i, err)
			}
		}
	}
}

// Without an Authenticator a mustUnderstand wsse:Security header is
// not understood, as before.
func TestSecurityHeaderNotUnderstood(t *testing.T) {
	_, hs, _ := newTestServer(t, ServerOptions{})
	body := securedRequest(t, "bob", "bob-pw", true, time.Now())
	r := post(t, hs.URL+"/po", "text/xml; charset=utf-8", "", body)
	if f := r.fault(t); f.Code != FaultMustUnderstand {
		t.Errorf("fault %v %q, want MustUnderstand", f.CodeValue, f.Reason)
	}
}

// SOAP 1.2's form of the fault: Sender, Subcode wsse:FailedAuthentication,
// HTTP 400.
func TestFailedAuthentication12(t *testing.T) {
	creds, err := wssec.ParseCredentials([]byte("bob:{PLAIN}bob-pw\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerOptions{})
	ep := calcEndpoint()
	ep.Auth = wssec.NewAuthenticator(wssec.Policy{Credentials: creds, Digest: true})
	if err := s.Handle(ep, &testDispatcher{}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	r := post(t, hs.URL+"/calc", "application/soap+xml; charset=utf-8", "", addRequest)
	f := r.fault(t)
	sub := `<env:Subcode><env:Value xmlns:wsse="` + nsWSSE + `">wsse:FailedAuthentication</env:Value></env:Subcode>`
	if r.status != http.StatusBadRequest || f.Code != FaultClient || f.Reason != failedAuthReason || !strings.Contains(r.body, sub) {
		t.Errorf("HTTP %d fault %s %q, want 400 Sender with Subcode wsse:FailedAuthentication:\n%s", r.status, f.CodeValue, f.Reason, r.body)
	}
}
