package deploy

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// TestPartnerAllow: orchd:partnerAllow rules of a <process>, by host
// name, IP, CIDR and port; a bad one is an error at its line; a process
// without rules has none (the operator's policy alone).
func TestPartnerAllow(t *testing.T) {
	for _, tc := range []struct {
		name, xml string
		rules     int
		err       string
	}{
		{"none", ``, 0, ""},
		{"host, CIDR and ports", `<o:partnerAllow host="*.partners.example" port="443"/>
<o:partnerAllow host="10.1.0.0/16" port="8080-8090"/>
<o:partnerAllow host="::1"/>`, 3, ""},
		{"no host", "\n\n<o:partnerAllow port=\"80\"/>", 0, `deploy.xml:5: <orchd:partnerAllow>: needs a host attribute`},
		{"bad port", "\n<o:partnerAllow host=\"10.0.0.1\" port=\"0\"/>", 0, `deploy.xml:4: <orchd:partnerAllow>: port "0": want 1-65535`},
		{"bad range", `<o:partnerAllow host="h.example" port="90-80"/>`, 0, `deploy.xml:3: <orchd:partnerAllow>: port range "90-80"`},
		{"bad CIDR", `<o:partnerAllow host="10.0.0.0/40"/>`, 0, `deploy.xml:3: <orchd:partnerAllow>: netip.ParsePrefix("10.0.0.0/40")`},
		{"bad host", `<o:partnerAllow host="user@h.example"/>`, 0, `deploy.xml:3: <orchd:partnerAllow>: "user@h.example" is no host name`},
		{"another namespace is ignored", `<x:partnerAllow xmlns:x="urn:other" host="?"/>`, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, errs := parseProcess(t, tc.xml)
			if tc.err != "" {
				if len(errs.List) != 1 || !strings.Contains(errs.List[0].Error(), tc.err) {
					t.Fatalf("errors %v, want %q", errs.List, tc.err)
				}
				return
			}
			if len(errs.List) > 0 {
				t.Fatal(errs.List)
			}
			l := d.Processes[0].PartnerAllow
			if tc.rules == 0 {
				if l != nil {
					t.Fatalf("rules %+v, want none", l)
				}
				return
			}
			if l == nil || len(l.Rules) != tc.rules {
				t.Fatalf("rules %+v, want %d", l, tc.rules)
			}
			if !l.AllowsName("crm.partners.example", 443) || l.AllowsName("crm.partners.example", 80) ||
				!l.AllowsIP(netip.MustParseAddr("10.1.9.9"), 8085) || l.AllowsIP(netip.MustParseAddr("10.1.9.9"), 8091) ||
				!l.AllowsIP(netip.MustParseAddr("::1"), 1) {
				t.Errorf("rules %+v do not match as written", l.Rules)
			}
		})
	}
}

// parseProcess parses a deploy.xml whose one <process> holds body
// (prefixes p, and o for urn:orchd:deploy; body starts at line 3).
func parseProcess(t *testing.T, body string) (*Descriptor, *xmldoc.Errors) {
	t.Helper()
	src := `<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:p="urn:p" xmlns:o="urn:orchd:deploy">
<process name="p:P">
` + body + `
</process></deploy>`
	doc, err := xmldoc.Parse("deploy.xml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	errs := &xmldoc.Errors{}
	return Parse(doc, errs), errs
}
