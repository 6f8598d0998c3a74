package soap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
		{"non-SOAP error", notSOAP.URL, ErrPartnerResponse, "502 Bad Gateway: gateway says no"},
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
			case !tt.want.IsZero() && (!isFault || f.Name != tt.want || f.Message.Parts["item"] == nil):
				t.Fatalf("err = %#v, want fault %s with its detail", err, tt.want)
			}
		})
	}
}
