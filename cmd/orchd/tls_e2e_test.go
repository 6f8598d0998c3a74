package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a certificate for 127.0.0.1 (a server's, or with client
// set a client's) and writes it and its key as PEM files into dir,
// returning their paths and the loaded pair.
func (ca *testCA) issue(t *testing.T, dir, name string, client bool) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	if client {
		tmpl.ExtKeyUsage, tmpl.IPAddresses = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pair, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

// startTLSPartner serves the misbehaving partner's answers over TLS with
// cert, requiring a client certificate from clientCAs when it is not nil,
// and records the common names of the client certificates it saw.
func startTLSPartner(t *testing.T, cert tls.Certificate, clientCAs *x509.CertPool) (addr string, clients func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAs != nil {
		cfg.ClientCAs, cfg.ClientAuth = clientCAs, tls.RequireAndVerifyClientCert
	}
	p := &misbehaving{stop: make(chan struct{}), conns: map[net.Conn]http.ConnState{}, attempts: map[string]int{}}
	var mu sync.Mutex
	var seen []string
	srv := &http.Server{TLSConfig: cfg, ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
				mu.Lock()
				seen = append(seen, r.TLS.PeerCertificates[0].Subject.CommonName)
				mu.Unlock()
			}
			p.serve(w, r)
		}),
		// The handshake failures the test provokes are expected.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() {
		close(p.stop)
		_ = srv.Close()
	})
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestTLS runs orchd over HTTPS, calling a partner over TLS that requires
// a client certificate (orchd trusts the partner's CA through
// --partner-ca and presents --partner-cert), and a partner whose
// certificate comes from a CA orchd does not know: that call is the
// catchable activityFailure naming the TLS problem.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "orchd test CA")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	srvCert, srvKey, srvPair := ca.issue(t, dir, "server", false)
	cliCert, cliKey, _ := ca.issue(t, dir, "orchd-client", true)
	strange := newTestCA(t, "unknown CA")
	_, _, strangePair := strange.issue(t, dir, "stranger", false)

	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	good, clients := startTLSPartner(t, srvPair, pool)
	bad, _ := startTLSPartner(t, strangePair, nil)

	deploy := t.TempDir()
	writePartnerFail(t, deploy, "https://"+good, "http://"+deadAddr(t), "https://"+bad)
	o := startOrchd(t, "--deploy", deploy, "--tls-cert", srvCert, "--tls-key", srvKey,
		"--partner-ca", caFile, "--partner-cert", cliCert, "--partner-key", cliKey)
	if !strings.Contains(o.log(), "scheme=https") {
		t.Fatalf("orchd does not say it serves https:\n%s", o.log())
	}
	base := strings.Replace(o.base, "http://", "https://", 1)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	a := callPartnerFail(t, client, base, "ok-tls", "")
	if a.status != 200 || a.fault != "none" || a.text != "P-ok-tls" {
		t.Fatalf("over TLS: %+v\n%s", a, o.log())
	}
	if got := clients(); len(got) != 1 || got[0] != "orchd-client" {
		t.Errorf("partner saw client certificates %q, want orchd-client", got)
	}
	a = callPartnerFail(t, client, base, "ok-stranger", "nohost")
	if a.status != 200 || a.fault != "ext:activityFailure" {
		t.Fatalf("partner with an unknown CA: %+v\n%s", a, o.log())
	}
	t.Logf("unknown CA: %s", a.text)
	for _, w := range []string{"nohost.call", "TLS", "certificate signed by unknown authority"} {
		if !strings.Contains(a.text, w) {
			t.Errorf("text %q does not say %q", a.text, w)
		}
	}
	// Plain HTTP to the HTTPS listener is not served.
	plain := &http.Client{Timeout: 10 * time.Second}
	if resp, err := plain.Get(o.base + "/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS listener: status %d", resp.StatusCode)
		}
	}
}
