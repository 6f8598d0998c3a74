package soap

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
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
		if got := p.allowsIP("", netip.MustParseAddr(tc.ip), tc.port); got != tc.want {
			t.Errorf("%s:%d allowed %v, want %v", tc.ip, tc.port, got, tc.want)
		}
	}
	// Name matching is partnerallow's (TestList); here only that the
	// policy uses it.
	if !p.allowsName("a.corp.example", 1) || p.allowsName("crm.example", 80) {
		t.Error("the policy's name rules do not match as written")
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
		_, err := c.AssignedPartner(ep).Invoke(context.Background(), &exchange.Call{Operation: ep.Operations[0], Input: in, Timeout: 50 * time.Millisecond})
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

// assignedCall calls the purchase order at addr, an address chosen at run
// time, through c under only (a bundle's rules, or nil), with a short
// call timeout.
func assignedCall(t *testing.T, c *Client, only *partnerallow.List, addr string) error {
	t.Helper()
	ep := poEndpoint()
	ep.Address = addr
	in := exchange.NewMessage(exchange.QName{})
	in.Parts["order"] = mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"/>`)
	_, err := c.AssignedPartnerUnder(ep, only).Invoke(context.Background(), &exchange.Call{Operation: ep.Operations[0], Input: in, Timeout: 200 * time.Millisecond})
	return err
}

// rulesOf parses bundle rules.
func rulesOf(t *testing.T, entries ...string) *partnerallow.List {
	t.Helper()
	l := &partnerallow.List{}
	for _, e := range entries {
		r, err := partnerallow.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		l.Rules = append(l.Rules, r)
	}
	return l
}

// htmlServer answers every request with an HTML page.
func htmlServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>internal</html>"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNarrowedPolicy: a bundle's rules narrow the operator's policy. With
// loopback allowed by the operator, a bundle allowing one port reaches it
// (the call fails past the dialer: the page is no SOAP answer) and is
// refused another; a bundle cannot open loopback the operator did not
// allow; without bundle rules the operator's policy alone applies.
func TestNarrowedPolicy(t *testing.T) {
	a, b := htmlServer(t), htmlServer(t)
	operator, err := ParsePartnerPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	only := rulesOf(t, strings.TrimPrefix(a.URL, "http://"))
	loopback := NewClient(ClientOptions{Policy: operator})
	closed := NewClient(ClientOptions{})
	for _, tc := range []struct {
		name    string
		c       *Client
		only    *partnerallow.List
		url     string
		refused bool
	}{
		{"allowed by both", loopback, only, a.URL, false},
		{"another port the bundle does not allow", loopback, only, b.URL, true},
		{"no bundle rules: the operator's policy", loopback, nil, b.URL, false},
		{"loopback the operator did not allow", closed, only, a.URL, true},
		{"a host name the bundle does not allow", loopback, rulesOf(t, "partner.example"), a.URL, true},
	} {
		err := assignedCall(t, tc.c, tc.only, tc.url)
		if err == nil || errors.Is(err, ErrPartnerNotAllowed) != tc.refused {
			t.Errorf("%s: err = %v, want refused by the policy %v", tc.name, err, tc.refused)
		}
	}
	p := operator.Narrow(rulesOf(t, "10.1.0.0/16:443", "crm.example"))
	for _, tc := range []struct {
		host string
		ip   string
		port int
		want bool
	}{
		{"", "10.1.2.3", 443, true},
		{"", "10.1.2.3", 80, false},
		{"", "10.2.0.1", 443, false},
		{"crm.example", "10.9.9.9", 80, true},
		{"crm.example", "169.254.169.254", 80, false}, // the operator forbids it
		{"crm.example", "127.0.0.1", 80, true},        // the operator allows loopback
	} {
		if got := p.allowsIP(tc.host, netip.MustParseAddr(tc.ip), tc.port); got != tc.want {
			t.Errorf("narrowed: %s %s:%d allowed %v, want %v", tc.host, tc.ip, tc.port, got, tc.want)
		}
	}
}

// TestAssignedFailuresLookAlike: an allowed address chosen at run time
// that refuses the connection, cuts it, answers a page that is no SOAP, or
// never answers: the caller gets the same error text for each (the host
// aside), so it cannot tell a closed port from an open one. (Each also
// ends no sooner than the call's timeout, failLate; not asserted here.)
func TestAssignedFailuresLookAlike(t *testing.T) {
	operator, err := ParsePartnerPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(ClientOptions{Policy: operator})
	cut := listen(t, func(conn net.Conn) { conn.Close() })
	silent := listen(t, func(conn net.Conn) {
		_, _ = io.Copy(io.Discard, conn) // reads, never answers
	})
	closedLn := listen(t, nil)
	closedAddr := closedLn.Addr().String()
	closedLn.Close()
	var texts []string
	for _, addr := range []string{closedAddr, cut.Addr().String(), silent.Addr().String(), strings.TrimPrefix(htmlServer(t).URL, "http://")} {
		err := assignedCall(t, c, nil, "http://"+addr+"/po")
		if err == nil || errors.Is(err, ErrPartnerNotAllowed) {
			t.Fatalf("%s: err = %v, want a failed call", addr, err)
		}
		texts = append(texts, strings.ReplaceAll(err.Error(), addr, "HOST"))
	}
	for i, s := range texts[1:] {
		if s != texts[0] {
			t.Errorf("failure %d told apart:\n%s\n%s", i+1, texts[0], s)
		}
	}
}

// listen accepts loopback connections, handing each to serve (nil: leave
// them open), until the test ends.
func listen(t *testing.T, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if serve == nil {
				continue
			}
			go serve(conn)
		}
	}()
	return ln
}

// TestNarrowedClientPerRules: the HTTP client of calls under a bundle's
// rules is one per set of rules, not per parsed list: a redeploy parses
// deploy.xml into a new list, and a client (with its idle connections)
// per deploy would pile up.
func TestNarrowedClientPerRules(t *testing.T) {
	policy, err := ParsePartnerPolicy([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(ClientOptions{Policy: policy})
	list := func(entries ...string) *partnerallow.List {
		l := &partnerallow.List{}
		for _, e := range entries {
			r, err := partnerallow.Parse(e)
			if err != nil {
				t.Fatal(err)
			}
			l.Rules = append(l.Rules, r)
		}
		return l
	}
	a, b := c.assignedHTTP(list("127.0.0.1:9000")), c.assignedHTTP(list("127.0.0.1:9000"))
	if a != b {
		t.Error("two lists of the same rules got two HTTP clients")
	}
	if c.assignedHTTP(list("127.0.0.1:9001")) == a {
		t.Error("other rules got the same HTTP client")
	}
}
