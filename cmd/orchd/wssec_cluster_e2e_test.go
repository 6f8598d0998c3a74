package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/etcdtest"
	"github.com/orchd/orchd/internal/wssec"
)

// TestClusterUsernameTokenReplay: two orchd nodes with --cluster serve
// an endpoint with orchd:usernameToken; a token node a accepted is
// refused by node b (and by a) as a replay: the nodes share the nonces
// in etcd (cluster.Nonces). Another token is accepted by b.
func TestClusterUsernameTokenReplay(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	dir := copyBundle(t, deploy, "purchase-order", crm, erp, map[string][][2]string{"deploy.xml": {
		{`<deploy `, `<deploy xmlns:orchd="urn:orchd:deploy" `},
		{`<service name="po:PurchaseOrderService" port="PurchaseOrderPort"/>`, `<service name="po:PurchaseOrderService" port="PurchaseOrderPort"/>
      <orchd:usernameToken credentials="users.txt" passwordType="digest"/>`},
	}})
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte("ann:{PLAIN}ann-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := startClusterNode(t, ec, deploy, "e2ewss", "a"), startClusterNode(t, ec, deploy, "e2ewss", "b")
	client := &http.Client{Timeout: 30 * time.Second}
	right := withToken(t, &wssec.Signer{User: "ann", Password: "ann-secret", Digest: true})
	for _, tt := range []struct {
		name string
		on   *orchd
		body []byte
		ok   bool
	}{
		{"fresh token on a", a, right, true},
		{"replayed to b", b, right, false},
		{"replayed to a", a, right, false},
		{"another token on b", b, withToken(t, &wssec.Signer{User: "ann", Password: "ann-secret", Digest: true}), true},
	} {
		r := post(t, client, tt.on.base+"/processes/PurchaseOrder", textXML, poAction, tt.body)
		if tt.ok {
			checkAck(t, r, map[string]string{"status": "ACCEPTED"})
			continue
		}
		if code, _ := faultCode(t, r.body); r.status != http.StatusInternalServerError || code != "FailedAuthentication" {
			t.Errorf("%s: HTTP %d fault %q, want wsse:FailedAuthentication", tt.name, r.status, code)
		}
	}
	if !strings.Contains(b.log(), "replayed") {
		t.Errorf("node b's log does not say the token was replayed:\n%s", b.log())
	}
}
