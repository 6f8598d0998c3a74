package soap

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/exchange"
)

func TestPartnerPolicy(t *testing.T) {
	p, err := ParsePartnerPolicy([]string{"127.0.0.1:9000-9010", "10.1.0.0/16", "[::1]:8080", "*.corp.example", "crm.example:443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ip   string
		port int
		want bool
	}{
		{"127.0.0.1", 9005, true},
		{"127.0.0.1", 8080, false}, // loopback outside the rule's ports
		{"::1", 8080, true},
		{"::ffff:127.0.0.1", 9001, true},
		{"169.254.169.254", 80, false}, // metadata
		{"fd00:ec2::254", 80, false},
		{"fe80::1", 80, false},
		{"0.0.0.0", 80, false},
		{"10.1.2.3", 1, true},
		{"10.2.0.1", 80, true}, // private addresses are not forbidden by default
		{"93.184.216.34", 443, true},
	} {
		if got := p.allowsIP(netip.MustParseAddr(tc.ip), tc.port); got != tc.want {
			t.Errorf("%s:%d allowed %v, want %v", tc.ip, tc.port, got, tc.want)
		}
	}
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"a.corp.example", 1, true}, {"corp.example", 1, true}, {"xcorp.example", 1, false},
		{"CRM.example.", 443, true}, {"crm.example", 80, false},
	} {
		if got := p.allowsName(tc.host, tc.port); got != tc.want {
			t.Errorf("name %s:%d allowed %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
	for _, bad := range []string{"127.0.0.1:0", "10.0.0.0/33", "[::1", "host:1-x", "a b"} {
		if _, err := ParsePartnerPolicy([]string{bad}); err == nil || !strings.Contains(err.Error(), "--partner-allow") {
			t.Errorf("%q: err %v, want one naming the flag", bad, err)
		}
	}
}

// TestAssignedPartnerPolicy: an address chosen at run time on loopback
// is refused at the dialer unless a rule allows it, and a failed call's
// error carries nothing of the partner's answer.
func TestAssignedPartnerPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>internal admin page secret-0815</html>"))
	}))
	defer srv.Close()
	call := func(c *Client) error {
		ep := poEndpoint()
		ep.Address = srv.URL
		in := exchange.NewMessage(exchange.QName{})
		in.Parts["order"] = mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"/>`)
		_, err := c.AssignedPartner(ep).Invoke(context.Background(), &exchange.Call{Operation: ep.Operations[0], Input: in})
		return err
	}
	err := call(NewClient(ClientOptions{}))
	if !errors.Is(err, ErrPartnerNotAllowed) {
		t.Fatalf("default policy: err = %v, want ErrPartnerNotAllowed", err)
	}
	allow, _ := ParsePartnerPolicy([]string{"127.0.0.1"})
	err = call(NewClient(ClientOptions{Policy: allow}))
	if err == nil || strings.Contains(err.Error(), "secret-0815") || strings.Contains(err.Error(), "html") || !strings.Contains(err.Error(), "submitPurchaseOrder") {
		t.Fatalf("allowed: err = %v, want the call named and nothing of the answer", err)
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range [][2]string{
		{"http://bob:pw1@crm.example:81/x?y", "http://***@crm.example:81/x?y"},
		{"http://crm.example/x", "http://crm.example/x"},
		{"partner http://u:p@h/soap op: refused; see https://x:y@z/q", "partner http://***@h/soap op: refused; see https://***@z/q"},
		{"mail a@b", "mail a@b"},
	} {
		got := RedactText(tc[0])
		if got != tc[1] {
			t.Errorf("RedactText(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
	if got := Redact("http://bob:pw1@crm.example/x"); strings.Contains(got, "pw1") || strings.Contains(got, "bob") {
		t.Errorf("Redact: %q", got)
	}
}
