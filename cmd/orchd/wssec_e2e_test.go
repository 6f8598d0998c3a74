package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/mockpartner"
	"github.com/orchd/orchd/internal/soap"
	"github.com/orchd/orchd/internal/wssec"
)

// withToken is the purchase order request with the Security header of
// signer (none for nil).
func withToken(t *testing.T, signer *wssec.Signer) []byte {
	t.Helper()
	req := string(readWorkload(t, "po-request.xml"))
	if signer == nil {
		return []byte(req)
	}
	h, err := signer.SecurityHeader(soap.NS11)
	if err != nil {
		t.Fatal(err)
	}
	doc := etree.NewDocument()
	doc.SetRoot(h)
	hb, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.Replace(req, "<soapenv:Header/>", "<soapenv:Header>"+hb+"</soapenv:Header>", 1))
}

// A process endpoint with orchd:usernameToken refuses requests without a
// right, fresh, new token with wsse:FailedAuthentication, serves the
// others, and its calls to the CRM carry a token the CRM authenticates.
func TestUsernameTokenEndToEnd(t *testing.T) {
	creds, err := wssec.ParseCredentials([]byte("orchd:{PLAIN}crm-secret\n"))
	if err != nil {
		t.Fatal(err)
	}
	crmAuth := wssec.NewAuthenticator(wssec.Policy{Credentials: creds, Digest: true})
	var crmOK, crmRefused atomic.Int64
	mocks := mockpartner.New(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The CRM checks the token as a WS-Security partner would, then
		// answers as the mock.
		body, err := soap.DecodeEnvelope(r.Body)
		if err == nil {
			_, _, err = crmAuth.Authenticate(body.Headers, false)
		}
		if err != nil {
			crmRefused.Add(1)
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		crmOK.Add(1)
		var b strings.Builder
		doc := etree.NewDocument()
		env := doc.CreateElement("soapenv:Envelope")
		env.CreateAttr("xmlns:soapenv", soap.NS11)
		env.CreateElement("soapenv:Body").AddChild(body.Body[0].Copy())
		_, _ = doc.WriteTo(&b)
		r2, _ := http.NewRequest(http.MethodPost, "/", strings.NewReader(b.String()))
		r2.Header = r.Header
		mocks.CRM().ServeHTTP(w, r2)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, erp := startMocks(t)

	deploy := t.TempDir()
	dir := copyBundle(t, deploy, "purchase-order", ln.Addr().String(), erp, map[string][][2]string{"deploy.xml": {
		{`<deploy `, `<deploy xmlns:orchd="urn:orchd:deploy" `},
		{`<service name="po:PurchaseOrderService" port="PurchaseOrderPort"/>`, `<service name="po:PurchaseOrderService" port="PurchaseOrderPort"/>
      <orchd:usernameToken credentials="users.txt" passwordType="digest"/>`},
		{`<service name="crm:CRMService" port="CRMPort"/>`, `<service name="crm:CRMService" port="CRMPort"/>
      <orchd:usernameToken user="orchd" passwordEnv="ORCHD_E2E_CRM_PW"/>`},
	}})
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte("ann:{PLAIN}ann-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ORCHD_E2E_CRM_PW", "crm-secret")
	o := startOrchd(t, "--deploy", deploy)
	url := o.base + "/processes/PurchaseOrder"
	client := &http.Client{Timeout: 30 * time.Second}

	right := withToken(t, &wssec.Signer{User: "ann", Password: "ann-secret", Digest: true})
	stale := withToken(t, &wssec.Signer{User: "ann", Password: "ann-secret", Digest: true, Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	for _, tt := range []struct {
		name string
		body []byte
		ok   bool
	}{
		{"no token", withToken(t, nil), false},
		{"wrong password", withToken(t, &wssec.Signer{User: "ann", Password: "guess", Digest: true}), false},
		{"stale", stale, false},
		{"right", right, true},
		{"replayed", right, false},
		{"another right one", withToken(t, &wssec.Signer{User: "ann", Password: "ann-secret", Digest: true}), true},
	} {
		r := post(t, client, url, textXML, poAction, tt.body)
		if tt.ok {
			checkAck(t, r, map[string]string{"status": "ACCEPTED"})
			continue
		}
		code, reason := faultCode(t, r.body)
		if r.status != http.StatusInternalServerError || code != "FailedAuthentication" || !strings.Contains(reason, "could not be authenticated") ||
			!strings.Contains(r.body, `xmlns:wsse="`+wssec.NSSecExt+`">wsse:FailedAuthentication<`) {
			t.Errorf("%s: HTTP %d fault %q %q, want 500 wsse:FailedAuthentication", tt.name, r.status, code, reason)
		}
	}
	if crmOK.Load() != 2 || crmRefused.Load() != 0 {
		t.Errorf("the CRM authenticated %d calls and refused %d, want 2 and 0", crmOK.Load(), crmRefused.Load())
	}
	log := o.log()
	for _, want := range []string{`msg="request refused: WS-Security"`, "wrong password", "stale", "replayed", "no wsse:Security header"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	for _, pw := range []string{"ann-secret", "crm-secret", "guess"} {
		if strings.Contains(log, pw) {
			t.Errorf("the log holds password %q", pw)
		}
	}
}
