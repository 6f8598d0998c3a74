package endpoints

import (
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/exchange"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		rules    int
		err      string // substring of the error, "" for success
	}{
		{"empty", "", 0, ""},
		{"comments and blanks", "# a comment\n\n   \t\n", 0, ""},
		{"service port", "{http://ns}Svc Port http://127.0.0.1:9/p", 1, ""},
		{"any port", "{http://ns}Svc * http://127.0.0.1:9/p # trailing comment", 1, ""},
		{"portType", "portType {http://ns}PT https://h/x", 1, ""},
		{"no namespace", "Svc Port http://h/", 1, ""},
		{"two", "{a}S P http://h/\nportType {b}T http://h/", 2, ""},
		{"too few fields", "{a}S http://h/", 0, "f.txt:1: want"},
		{"too many fields", "{a}S P http://h/ extra", 0, "f.txt:1:"},
		{"bad qname", "\n{aS P http://h/", 0, "f.txt:2: service"},
		{"relative address", "{a}S P /path", 0, "f.txt:1: address"},
		{"other scheme", "{a}S P ftp://h/", 0, "want an absolute http"},
		{"portType arity", "portType {a}T", 0, "f.txt:1: want 'portType"},
		{"bad portType", "portType {a} http://h/", 0, "portType"},
		{"every bad line", "x\n{a}S P http://h/\ny", 0, "f.txt:3:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := Parse("f.txt", strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(tab.Rules()); got != tc.rules {
				t.Fatalf("%d rules, want %d", got, tc.rules)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	tab, err := Parse("f", strings.NewReader(`
portType {urn:pt}Probe http://probe/
{urn:s}Svc * http://any/
{urn:s}Svc Exact http://exact/
`))
	if err != nil {
		t.Fatal(err)
	}
	probeOp := &exchange.Operation{Name: "probe", PortType: exchange.QName{Space: "urn:pt", Local: "Probe"}}
	tests := []struct {
		name string
		ep   exchange.Endpoint
		want string
	}{
		{"exact port wins over *", exchange.Endpoint{Service: exchange.QName{Space: "urn:s", Local: "Svc"}, Port: "Exact"}, "http://exact/"},
		{"prefixed port", exchange.Endpoint{Service: exchange.QName{Space: "urn:s", Local: "Svc"}, Port: "tns:Exact"}, "http://exact/"},
		{"any port", exchange.Endpoint{Service: exchange.QName{Space: "urn:s", Local: "Svc"}, Port: "Other"}, "http://any/"},
		{"service wins over portType", exchange.Endpoint{Service: exchange.QName{Space: "urn:s", Local: "Svc"}, Port: "X", Operations: []*exchange.Operation{probeOp}}, "http://any/"},
		{"portType", exchange.Endpoint{Service: exchange.QName{Local: "ignore"}, Port: "ignore", Operations: []*exchange.Operation{probeOp}}, "http://probe/"},
		{"no match", exchange.Endpoint{Service: exchange.QName{Space: "urn:other", Local: "Svc"}, Port: "Exact", Address: "http://wsdl/"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tab.Lookup(&tc.ep)
			if ok != (tc.want != "") || got != tc.want {
				t.Fatalf("Lookup = %q, %v; want %q", got, ok, tc.want)
			}
			applied := tab.Apply(&tc.ep)
			switch {
			case tc.want == "" && applied != &tc.ep:
				t.Fatal("Apply copied an endpoint no rule matches")
			case tc.want != "" && (applied.Address != tc.want || tc.ep.Address == tc.want):
				t.Fatalf("Apply: address %q (original %q), want %q on a copy", applied.Address, tc.ep.Address, tc.want)
			}
		})
	}
	var nilTable *Table
	if _, ok := nilTable.Lookup(&tests[0].ep); ok {
		t.Fatal("a nil table matched")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("{http://ns}S P http://127.0.0.1:1/x\nportType {u}T https://h/ # c\n")
	f.Add("{a S * http://h/")
	f.Add("portType {}T http://h")
	f.Fuzz(func(t *testing.T, in string) {
		tab, err := Parse("fuzz", strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error without file:line: %v", err)
			}
			return
		}
		for _, r := range tab.Rules() {
			if err := check(r); err != nil || r.Line < 1 {
				t.Fatalf("accepted bad rule %+v: %v", r, err)
			}
		}
	})
}
