package mockpartner

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// workload reads a file of the workload contract (the repository's
// testdata/workload).
func workload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "workload", name))
	if err != nil {
		t.Fatalf("workload file: %v", err)
	}
	return b
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func post(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusMethodNotAllowed && ct != "text/xml; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	return resp.StatusCode, b
}

// soapFault is the SOAP 1.1 fault as the partners write it.
type soapFault struct {
	Code   string `xml:"Body>Fault>faultcode"`
	String string `xml:"Body>Fault>faultstring"`
}

func parseFault(t *testing.T, b []byte) soapFault {
	t.Helper()
	var f soapFault
	if err := xml.Unmarshal(b, &f); err != nil {
		t.Fatalf("fault does not parse: %v\n%s", err, b)
	}
	return f
}

var (
	crmRefRE = regexp.MustCompile(`<crm:crmRef>([^<]*)</crm:crmRef>`)
	woRE     = regexp.MustCompile(`<erp:workOrderId>([^<]*)</erp:workOrderId>`)
)

func TestCRMAnswersLikeTheWorkload(t *testing.T) {
	srv := httptest.NewServer(New(testLogger(t)).CRM())
	defer srv.Close()

	want := bytes.TrimSpace(workload(t, "crm-response.xml"))
	status, got := post(t, srv.URL+"/crm", workload(t, "crm-request.xml"))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("first response\n got %s\nwant %s", got, want)
	}
	for i := 2; i <= 3; i++ {
		_, got = post(t, srv.URL+"/any/path", workload(t, "crm-request.xml"))
		if m := crmRefRE.FindSubmatch(got); m == nil || string(m[1]) != fmt.Sprintf("CRM-%08d", i) {
			t.Fatalf("response %d: %s", i, got)
		}
		if !bytes.Contains(got, []byte("<crm:poId>PO-000123</crm:poId>")) {
			t.Fatalf("poId not echoed: %s", got)
		}
	}
}

func TestERPAnswersLikeTheWorkload(t *testing.T) {
	srv := httptest.NewServer(New(testLogger(t)).ERP())
	defer srv.Close()

	want := bytes.TrimSpace(workload(t, "erp-response.xml"))
	status, got := post(t, srv.URL+"/erp", workload(t, "erp-request.xml"))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("first response\n got %s\nwant %s", got, want)
	}
	_, got = post(t, srv.URL+"/erp", workload(t, "erp-request.xml"))
	if m := woRE.FindSubmatch(got); m == nil || string(m[1]) != "WO-00000002" {
		t.Fatalf("second response: %s", got)
	}
}

func TestCountersArePerPartner(t *testing.T) {
	p := New(nil)
	crm := httptest.NewServer(p.CRM())
	defer crm.Close()
	erp := httptest.NewServer(p.ERP())
	defer erp.Close()

	post(t, crm.URL, workload(t, "crm-request.xml"))
	post(t, crm.URL, workload(t, "crm-request.xml"))
	_, got := post(t, erp.URL, workload(t, "erp-request.xml"))
	if m := woRE.FindSubmatch(got); m == nil || string(m[1]) != "WO-00000001" {
		t.Fatalf("ERP counter affected by CRM calls: %s", got)
	}
	// A faulted request does not consume a reference.
	post(t, crm.URL, []byte("<broken"))
	_, got = post(t, crm.URL, workload(t, "crm-request.xml"))
	if m := crmRefRE.FindSubmatch(got); m == nil || string(m[1]) != "CRM-00000003" {
		t.Fatalf("third CRM reference: %s", got)
	}
}

func TestConcurrentReferencesAreUnique(t *testing.T) {
	srv := httptest.NewServer(New(nil).CRM())
	defer srv.Close()
	req := workload(t, "crm-request.xml")

	const n = 64
	refs := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := http.Post(srv.URL, "text/xml", bytes.NewReader(req))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if m := crmRefRE.FindSubmatch(b); m != nil {
				refs <- string(m[1])
			} else {
				t.Errorf("no crmRef in %s", b)
			}
		})
	}
	wg.Wait()
	close(refs)
	seen := map[string]bool{}
	for r := range refs {
		if seen[r] {
			t.Fatalf("duplicate reference %s", r)
		}
		seen[r] = true
	}
	if len(seen) != n || !seen[fmt.Sprintf("CRM-%08d", n)] {
		t.Fatalf("got %d references, want CRM-00000001..CRM-%08d", len(seen), n)
	}
}

func TestPoIDIsEscaped(t *testing.T) {
	srv := httptest.NewServer(New(nil).ERP())
	defer srv.Close()
	req := bytes.Replace(workload(t, "erp-request.xml"),
		[]byte("<erp:poId>PO-000123</erp:poId>"), []byte("<erp:poId>PO &lt;1&gt; &amp; &quot;2&quot;</erp:poId>"), 1)
	status, got := post(t, srv.URL, req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, got)
	}
	var resp struct {
		PoID string `xml:"Body>createWorkOrderResponse>poId"`
	}
	if err := xml.Unmarshal(got, &resp); err != nil {
		t.Fatalf("response does not parse: %v\n%s", err, got)
	}
	if resp.PoID != `PO <1> & "2"` {
		t.Fatalf("poId = %q", resp.PoID)
	}
}

// remove deletes the first element named tag (with its content) from doc.
func remove(t *testing.T, doc []byte, tag string) []byte {
	t.Helper()
	re := regexp.MustCompile(`(?s)<` + regexp.QuoteMeta(tag) + `>.*?</` + regexp.QuoteMeta(tag) + `>`)
	loc := re.FindIndex(doc)
	if loc == nil {
		t.Fatalf("no %s in request", tag)
	}
	return append(append([]byte{}, doc[:loc[0]]...), doc[loc[1]:]...)
}

func TestClientFaults(t *testing.T) {
	p := New(testLogger(t))
	crm := httptest.NewServer(p.CRM())
	defer crm.Close()
	erp := httptest.NewServer(p.ERP())
	defer erp.Close()
	crmReq := workload(t, "crm-request.xml")
	erpReq := workload(t, "erp-request.xml")

	tests := []struct {
		name   string
		url    string
		body   []byte
		status int
		want   string // in faultstring
	}{
		{"crm poId", crm.URL, remove(t, crmReq, "crm:poId"), 500, "missing required field crm:poId"},
		{"crm accountId", crm.URL, remove(t, crmReq, "crm:accountId"), 500, "missing required field crm:account/crm:accountId"},
		{"crm account", crm.URL, remove(t, crmReq, "crm:account"), 500, "crm:account/crm:accountId"},
		{"crm orderTotal", crm.URL, remove(t, crmReq, "crm:orderTotal"), 500, "missing required field crm:orderTotal"},
		{"crm empty orderTotal", crm.URL, bytes.Replace(crmReq, []byte("322.48"), []byte("  "), 1), 500, "crm:orderTotal"},
		{"erp poId", erp.URL, remove(t, erpReq, "erp:poId"), 500, "missing required field erp:poId"},
		{"erp crmRef", erp.URL, remove(t, erpReq, "erp:crmRef"), 500, "missing required field erp:crmRef"},
		{"erp lines", erp.URL, remove(t, erpReq, "erp:lines"), 500, "missing required field erp:lines"},
		{"erp no line", erp.URL, regexp.MustCompile(`(?s)<erp:lines>.*</erp:lines>`).ReplaceAll(erpReq, []byte("<erp:lines/>")), 500, "erp:lines/erp:line"},
		{"erp sku", erp.URL, remove(t, erpReq, "erp:sku"), 500, "missing required field erp:lines/erp:line[1]/erp:sku"},
		{"erp quantity", erp.URL, bytes.Replace(erpReq, []byte("<erp:quantity>10</erp:quantity>"), nil, 1), 500, "erp:lines/erp:line[3]/erp:quantity"},
		{"malformed", crm.URL, crmReq[:len(crmReq)/2], 500, "malformed XML"},
		{"mismatched tags", erp.URL, []byte(`<a><b></a>`), 500, "malformed XML"},
		{"empty body", erp.URL, nil, 500, "malformed XML"},
		{"not soap", crm.URL, []byte(`<recordPurchaseOrder xmlns="urn:example:crm"/>`), 500, "not a SOAP 1.1 envelope"},
		{"soap 1.2", crm.URL, []byte(`<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body/></e:Envelope>`), 500, "not a SOAP 1.1 envelope"},
		{"empty body element", crm.URL, []byte(`<e:Envelope xmlns:e="` + SOAPEnvNS + `"><e:Body/></e:Envelope>`), 500, "SOAP Body is empty"},
		{"wrong operation", crm.URL, erpReq, 500, "unexpected operation element {urn:example:erp}createWorkOrder"},
		{"too large", crm.URL, bytes.Repeat([]byte(" "), MaxBodyBytes+1), http.StatusRequestEntityTooLarge, "exceeds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, got := post(t, tc.url, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, got)
			}
			f := parseFault(t, got)
			if f.Code != "soapenv:Client" {
				t.Errorf("faultcode %q", f.Code)
			}
			if !strings.Contains(f.String, tc.want) {
				t.Errorf("faultstring %q does not contain %q", f.String, tc.want)
			}
		})
	}
}

func TestWrongMethod(t *testing.T) {
	srv := httptest.NewServer(New(nil).CRM())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/crm")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("status %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestServe serves on listeners the test holds (port 0, read back):
// Serve is a listen on each address and then this; its listen errors are
// TestServeAddressInUse's. No port is picked by closing a listener.
func TestServe(t *testing.T) {
	var lns [2]net.Listener
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
	}
	crmAddr, erpAddr := lns[0].Addr().String(), lns[1].Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(testLogger(t)).ServeListeners(ctx, lns[0], lns[1]) }()

	if status, got := post(t, "http://"+crmAddr+"/crm", workload(t, "crm-request.xml")); status != 200 || !bytes.Contains(got, []byte("CRM-00000001")) {
		t.Fatalf("CRM: %d %s", status, got)
	}
	if status, got := post(t, "http://"+erpAddr+"/erp", workload(t, "erp-request.xml")); status != 200 || !bytes.Contains(got, []byte("WO-00000001")) {
		t.Fatalf("ERP: %d %s", status, got)
	}
	if status, _ := post(t, "http://"+erpAddr+"/elsewhere", workload(t, "erp-request.xml")); status != 200 {
		t.Fatalf("ERP on another path: %d", status)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := net.Dial("tcp", crmAddr); err == nil {
		t.Fatal("CRM still listening after shutdown")
	}
}

func TestServeAddressInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The other partner's address is port 0: only addr can fail.
	for _, tc := range []struct{ crm, erp string }{{addr, "127.0.0.1:0"}, {"127.0.0.1:0", addr}} {
		err := New(nil).Serve(ctx, tc.crm, tc.erp)
		if err == nil || !strings.Contains(err.Error(), addr) {
			t.Fatalf("Serve(%s, %s) = %v, want an error naming %s", tc.crm, tc.erp, err, addr)
		}
		if ctx.Err() != nil {
			t.Fatal("Serve did not return the listen error at once")
		}
	}
}

func TestServeListenersStopsWhenAServerFails(t *testing.T) {
	crmLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	erpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	erpLn.Close() // Serve on it fails at once
	err = New(nil).ServeListeners(context.Background(), crmLn, erpLn)
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("ServeListeners = %v, want the ERP serve error", err)
	}
	if !strings.Contains(err.Error(), "erp") {
		t.Fatalf("error %q does not name the partner", err)
	}
}

func TestReference(t *testing.T) {
	for n, want := range map[uint64]string{1: "CRM-00000001", 42: "CRM-00000042", 123456789: "CRM-123456789"} {
		if got := reference("CRM-", n); got != want {
			t.Errorf("reference(%d) = %q, want %q", n, got, want)
		}
	}
}

func BenchmarkCRM(b *testing.B) {
	h := New(nil).CRM()
	body, err := os.ReadFile("testdata/crm-request.xml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/crm", bytes.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
