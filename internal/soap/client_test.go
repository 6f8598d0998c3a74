package soap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

func TestClientAgainstServer(t *testing.T) {
	_, hs, d := newTestServer(t, ServerOptions{})
	c := NewClient(ClientOptions{})
	po := poEndpoint()
	po.Address = hs.URL + "/po"
	calc := calcEndpoint()
	calc.Address = hs.URL + "/calc"

	order := func(id string) *exchange.Message {
		env, err := DecodeEnvelope(strings.NewReader(poRequest(t, id)))
		if err != nil {
			t.Fatal(err)
		}
		m := exchange.NewMessage(po.Operations[0].Input.Name)
		m.Parts["order"] = env.Body[0]
		return m
	}

	t.Run("reply", func(t *testing.T) {
		out, err := c.Partner(po).Invoke(context.Background(), &exchange.Call{Operation: po.Operations[0], Input: order("PO-9")})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Part("ack").FindElement("poId").Text(); got != "PO-9" {
			t.Errorf("ack poId = %q", got)
		}
	})
	t.Run("rpc 1.2 reply", func(t *testing.T) {
		in := exchange.NewMessage(calc.Operations[0].Input.Name)
		a := etree.NewElement("a")
		a.SetText("40")
		in.Parts["a"] = a
		in.Parts["b"] = mustElement(t, `<c:operand xmlns:c="urn:example:calc">2</c:operand>`)
		out, err := c.Partner(calc).Invoke(context.Background(), &exchange.Call{Operation: calc.Operations[0], Input: in})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Part("sum").Text(); got != "42" {
			t.Errorf("sum = %q", got)
		}
	})
	t.Run("one-way", func(t *testing.T) {
		in := exchange.NewMessage(po.Operations[1].Input.Name)
		in.Parts["n"] = mustElement(t, `<n:notification xmlns:n="urn:example:po"/>`)
		before := d.notified.Load()
		out, err := c.Partner(po).Invoke(context.Background(), &exchange.Call{Operation: po.Operations[1], Input: in})
		if err != nil || out != nil {
			t.Fatalf("(%v, %v)", out, err)
		}
		if d.notified.Load() != before+1 {
			t.Error("notification not dispatched")
		}
	})
	t.Run("declared fault", func(t *testing.T) {
		_, err := c.Partner(po).Invoke(context.Background(), &exchange.Call{Operation: po.Operations[0], Input: order("FAULT")})
		var f *exchange.Fault
		if !errors.As(err, &f) {
			t.Fatalf("err = %v, want *exchange.Fault", err)
		}
		if f.Name != (exchange.QName{Space: nsPO, Local: "invalidOrder"}) || f.Reason != "invalidOrder: no items" {
			t.Errorf("fault %v %q", f.Name, f.Reason)
		}
		if d := f.Message.Part("detail"); d == nil || d.FindElement("why").Text() != "no items" {
			t.Errorf("fault message %v", f.Message)
		}
	})
	t.Run("undeclared fault", func(t *testing.T) {
		_, err := c.Partner(po).Invoke(context.Background(), &exchange.Call{Operation: po.Operations[0], Input: order("CLIENT")})
		if !errors.Is(err, ErrPartnerFault) || exchange.KindOf(err) != exchange.KindServer {
			t.Fatalf("err = %v", err)
		}
		want := "partner " + po.Address + " submitPurchaseOrder: answered fault soapenv:Client (undeclared): customer C-1 unknown"
		if err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
	})
	t.Run("missing part", func(t *testing.T) {
		_, err := c.Partner(po).Invoke(context.Background(), &exchange.Call{Operation: po.Operations[0], Input: exchange.NewMessage(exchange.QName{})})
		if !errors.Is(err, ErrMessage) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestClientFailures(t *testing.T) {
	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/po"
	l.Close()

	notSOAP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "gateway says no", http.StatusBadGateway)
	}))
	defer notSOAP.Close()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release) // before Close, which waits for the handler
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(strings.Repeat(" ", 2048)))
	}))
	defer big.Close()

	tests := []struct {
		name    string
		address string
		want    error
		text    string
	}{
		{"connection refused", refused, nil, "refused"},
		{"non-SOAP error", notSOAP.URL, ErrPartnerResponse, "HTTP 502 Bad Gateway"},
		{"timeout", slow.URL, ErrPartnerTimeout, "timed out: no answer within 200ms"},
		{"too large", big.URL, ErrTooLarge, "exceeds 1024 bytes"},
	}
	c := NewClient(ClientOptions{Timeout: 200 * time.Millisecond, MaxResponseBytes: 1024})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := poEndpoint()
			ep.Address = tt.address
			in := exchange.NewMessage(exchange.QName{})
			in.Parts["order"] = mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"/>`)
			_, err := c.Partner(ep).Invoke(context.Background(), &exchange.Call{Operation: ep.Operations[0], Input: in})
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.address) || !strings.Contains(msg, "submitPurchaseOrder") || !strings.Contains(msg, tt.text) {
				t.Errorf("err = %q, want address, operation and %q", msg, tt.text)
			}
			if strings.Contains(msg, "gateway says no") {
				t.Errorf("err = %q carries the partner's answer", msg)
			}
		})
	}
}

// A partner endpoint with no address (deploy.xml named a service no WSDL
// describes) fails with an error saying so, without an HTTP attempt.
func TestClientNoAddress(t *testing.T) {
	po := poEndpoint()
	po.Address = ""
	_, err := NewClient(ClientOptions{}).Partner(po).Invoke(context.Background(), &exchange.Call{Operation: po.Operations[0], Input: exchange.NewMessage(po.Operations[0].Input.Name)})
	if err == nil || !strings.Contains(err.Error(), "has no address") || !strings.Contains(err.Error(), po.Service.Local) {
		t.Fatalf("Invoke with no address: %v", err)
	}
}

// A partner's SOAP fault: an application faultcode the WSDL does not
// declare is a fault named by that code (catchable in BPEL), with the
// detail as its data; a SOAP envelope faultcode stays a failure.
func TestClientUndeclaredFault(t *testing.T) {
	tests := []struct {
		name, code string
		want       exchange.QName // zero: a failure, not a fault
	}{
		{"application code", `app:OutOfStock`, exchange.QName{Space: "urn:app", Local: "OutOfStock"}},
		{"envelope code", `soapenv:Server`, exchange.QName{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/xml")
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintf(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:app="urn:app"><soapenv:Body><soapenv:Fault><faultcode>%s</faultcode><faultstring>no</faultstring><detail><app:item>42</app:item></detail></soapenv:Fault></soapenv:Body></soapenv:Envelope>`, tt.code)
			}))
			defer srv.Close()
			ep := poEndpoint()
			ep.Address = srv.URL
			in := exchange.NewMessage(exchange.QName{})
			in.Parts["order"] = mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"/>`)
			_, err := NewClient(ClientOptions{}).Partner(ep).Invoke(context.Background(), &exchange.Call{Operation: ep.Operations[0], Input: in})
			var f *exchange.Fault
			isFault := errors.As(err, &f)
			switch {
			case tt.want.IsZero() && (isFault || !errors.Is(err, ErrPartnerFault)):
				t.Fatalf("err = %v, want a partner failure", err)
			case tt.want.IsZero():
				// The runtime decides what an undeclared fault is: it
				// gets the code, reason and detail.
				var uf *exchange.UndeclaredFault
				if !errors.As(err, &uf) || uf.Code.Local != "Server" || uf.Reason != "no" || len(uf.Detail) != 1 || uf.Detail[0].Tag != "item" {
					t.Fatalf("err = %v, want an exchange.UndeclaredFault with the detail", err)
				}
			case !tt.want.IsZero() && (!isFault || f.Name != tt.want || f.Message.Parts["item"] == nil):
				t.Fatalf("err = %#v, want fault %s with its detail", err, tt.want)
			}
		})
	}
}

// What the client sends and how it reads answers other than a SOAP
// reply: a redirect is not followed, a 401 says whose credentials were
// refused, basic credentials go in the Authorization header, a call's own
// timeout beats the client's, a reply over the limit is not drained.
func TestClientPartnerTerms(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		// Read to the end: only then does the server notice a client
		// that hangs up (the slow case).
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/po", http.StatusTemporaryRedirect)
		case "/auth":
			if u, p, ok := r.BasicAuth(); ok && u == "u" && p == "right" {
				w.Header().Set("Content-Type", "text/xml")
				_, _ = io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body/></soapenv:Envelope>`)
				return
			}
			http.Error(w, "no", http.StatusUnauthorized)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "/endless":
			w.Header().Set("Content-Type", "text/xml")
			chunk := strings.Repeat("x", 64<<10)
			for i := 0; i < 1024; i++ {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		}
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{Timeout: 5 * time.Second, MaxResponseBytes: 1024})
	tests := []struct {
		name, path string
		auth       *exchange.BasicAuth
		timeout    time.Duration
		want       error
		text       string
	}{
		{name: "redirect", path: "/redirect", want: ErrPartnerResponse, text: `HTTP 307 Temporary Redirect, a redirect to "/po" (not followed`},
		{name: "no credentials", path: "/auth", want: ErrPartnerResponse, text: "HTTP 401 Unauthorized: no credentials configured"},
		{name: "wrong password", path: "/auth", auth: &exchange.BasicAuth{User: "u", Password: "wrong"}, want: ErrPartnerResponse, text: `credentials of user "u" refused`},
		{name: "right password", path: "/auth", auth: &exchange.BasicAuth{User: "u", Password: "right"}, want: ErrMessage},
		{name: "call timeout", path: "/slow", timeout: 100 * time.Millisecond, want: ErrPartnerTimeout, text: "no answer within 100ms"},
		{name: "endless reply", path: "/endless", want: ErrTooLarge, text: "exceeds 1024 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			ep := poEndpoint()
			ep.Address, ep.BasicAuth = srv.URL+tt.path, tt.auth
			in := exchange.NewMessage(exchange.QName{})
			in.Parts["order"] = mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"/>`)
			_, err := c.Partner(ep).Invoke(context.Background(), &exchange.Call{Operation: ep.Operations[0], Input: in, Timeout: tt.timeout})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.want, tt.text)
			}
			if strings.Contains(err.Error(), "wrong") || strings.Contains(err.Error(), "right") {
				t.Errorf("the password is in the error: %v", err)
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}
