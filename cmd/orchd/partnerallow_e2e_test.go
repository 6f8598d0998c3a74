package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// allowInBundle adds orchd:partnerAllow rules to the deploy.xml
// writeProcess wrote for name.
func allowInBundle(t *testing.T, deployDir, name string, rules ...string) {
	t.Helper()
	f := filepath.Join(deployDir, name, "deploy.xml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var els strings.Builder
	for _, r := range rules {
		host, port, _ := strings.Cut(r, " ")
		els.WriteString(`<o:partnerAllow xmlns:o="urn:orchd:deploy" host="` + host + `" port="` + port + `"/>` + "\n    ")
	}
	s := strings.Replace(string(b), "<provide ", els.String()+"<provide ", 1)
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBundlePartnerAllow: the operator allows loopback (--partner-allow
// 127.0.0.1); a bundle's orchd:partnerAllow narrows what its process may
// reach through a copied endpoint reference to one port. The process
// reaches the partner there, and is refused another loopback partner
// that would answer (which is never called); a process of another bundle
// without rules reaches that partner under the operator's policy alone.
func TestBundlePartnerAllow(t *testing.T) {
	allowed, other := startSlowPartner(t, 0), startSlowPartner(t, 0)
	_, allowedPort, _ := net.SplitHostPort(allowed.addr)
	deploy := t.TempDir()
	body := runBody(`
    <assign><copy><from>$in.payload/tns:n</from><to partnerLink="partner"/></copy></assign>
    ` + invokeInto)
	writeProcess(t, deploy, "EprNarrow", "127.0.0.1:1", body, true)
	allowInBundle(t, deploy, "EprNarrow", "127.0.0.1 "+allowedPort)
	writeProcess(t, deploy, "EprWide", "127.0.0.1:1", body, true)
	o := startOrchd(t, "--deploy", deploy, "--partner-allow", "127.0.0.1")
	client := &http.Client{Timeout: 60 * time.Second}
	run := func(process, id, addr string) response {
		return post(t, client, o.base+"/processes/"+process, textXML, `"urn:e2e#run"`, eprRequest(id, wsaEPR("http://"+addr+"/partner")))
	}
	if r := run("EprNarrow", "A1", allowed.addr); r.status != 200 || !strings.Contains(r.body, ">P-A1<") {
		t.Fatalf("the port the bundle allows: %d %s\n%s", r.status, r.body, o.log())
	}
	r := run("EprNarrow", "B1", other.addr)
	if r.status == 200 || strings.Contains(r.body, "P-B1") {
		t.Errorf("a port the bundle does not allow: %d %s", r.status, r.body)
	}
	if _, reason := faultCode(t, r.body); !strings.Contains(reason, "not allowed by the partner address policy") {
		t.Errorf("a port the bundle does not allow: fault %q, want the policy's refusal", reason)
	}
	if n := other.done.Load(); n != 0 {
		t.Errorf("the partner outside the bundle's rules was called %d times", n)
	}
	if r := run("EprWide", "B2", other.addr); r.status != 200 || !strings.Contains(r.body, ">P-B2<") {
		t.Errorf("a bundle without rules, under --partner-allow: %d %s", r.status, r.body)
	}
}
