package reference

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/orchd/orchd/internal/mockpartner"
)

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compact drops the whitespace between tags, as in the one-line envelopes
// the partners and orchd write.
func compact(b []byte) []byte {
	return regexp.MustCompile(`>\s+<`).ReplaceAll(bytes.TrimSpace(b), []byte("><"))
}

// recorder keeps the bodies a partner handler was sent.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
	action []string
	next   http.Handler
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, b)
	rc.action = append(rc.action, r.Header.Get("SOAPAction"))
	rc.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(b))
	rc.next.ServeHTTP(w, r)
}

type fixture struct {
	ref      *httptest.Server
	crm, erp *recorder
}

func newFixture(t testing.TB, crmH, erpH http.Handler) *fixture {
	t.Helper()
	return newFixtureOpts(t, crmH, erpH, Options{})
}

// newFixtureOpts is newFixture with the handler's options (the partner
// URLs are set here).
func newFixtureOpts(t testing.TB, crmH, erpH http.Handler, o Options) *fixture {
	t.Helper()
	p := mockpartner.New(nil)
	if crmH == nil {
		crmH = p.CRM()
	}
	if erpH == nil {
		erpH = p.ERP()
	}
	f := &fixture{crm: &recorder{next: crmH}, erp: &recorder{next: erpH}}
	crm := httptest.NewServer(f.crm)
	t.Cleanup(crm.Close)
	erp := httptest.NewServer(f.erp)
	t.Cleanup(erp.Close)
	o.CRMURL, o.ERPURL = crm.URL+"/crm", erp.URL+"/erp"
	f.ref = httptest.NewServer(New(o))
	t.Cleanup(f.ref.Close)
	return f
}

func post(t testing.TB, url, ctype string, body []byte) (int, []byte) {
	t.Helper()
	status, b, err := postErr(url, ctype, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, b
}

// postErr is post for any goroutine (t.Fatal is for the test's own):
// failures, a wrong Content-Type among them, are returned.
func postErr(url, ctype string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("SOAPAction", `"urn:example:po#submitPurchaseOrder"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 405 && ct != "text/xml; charset=utf-8" {
		return resp.StatusCode, b, fmt.Errorf("Content-Type %q", ct)
	}
	return resp.StatusCode, b, nil
}

const ctXML = "text/xml; charset=utf-8"

type ack struct {
	PoID        string `xml:"Body>purchaseOrderAck>poId"`
	CrmRef      string `xml:"Body>purchaseOrderAck>crmRef"`
	WorkOrderID string `xml:"Body>purchaseOrderAck>workOrderId"`
	Total       string `xml:"Body>purchaseOrderAck>total"`
	Status      string `xml:"Body>purchaseOrderAck>status"`
}

func TestAckIsTheWorkloadAck(t *testing.T) {
	for _, transportOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("TransportOnly=%v", transportOnly), func(t *testing.T) {
			testAckIsTheWorkloadAck(t, Options{TransportOnly: transportOnly})
		})
	}
}

// testAckIsTheWorkloadAck checks one exchange against the workload's
// messages. With TransportOnly the messages are fixed, and must still be
// the workload's, byte for byte, so that the floor moves the same bytes.
func testAckIsTheWorkloadAck(t *testing.T, o Options) {
	f := newFixtureOpts(t, nil, nil, o)
	status, got := post(t, f.ref.URL+"/processes/PurchaseOrder", ctXML, testdata(t, "po-request.xml"))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, got)
	}
	if want := compact(testdata(t, "po-ack.xml")); !bytes.Equal(got, want) {
		t.Fatalf("ack\n got %s\nwant %s", got, want)
	}
	// The partners were sent exactly the workload's requests.
	if want := compact(testdata(t, "crm-request.xml")); len(f.crm.bodies) != 1 || !bytes.Equal(f.crm.bodies[0], want) {
		t.Errorf("CRM request\n got %s\nwant %s", f.crm.bodies, want)
	}
	if want := compact(testdata(t, "erp-request.xml")); len(f.erp.bodies) != 1 || !bytes.Equal(f.erp.bodies[0], want) {
		t.Errorf("ERP request\n got %s\nwant %s", f.erp.bodies, want)
	}
	if f.crm.action[0] != `"urn:example:crm#recordPurchaseOrder"` || f.erp.action[0] != `"urn:example:erp#createWorkOrder"` {
		t.Errorf("SOAPActions %q %q", f.crm.action, f.erp.action)
	}
}

func TestBothWorkloadRequests(t *testing.T) {
	f := newFixture(t, nil, nil)
	for i, tc := range []struct {
		file string
		want ack
	}{
		{"po-request.xml", ack{"PO-000123", "CRM-00000001", "WO-00000001", "322.48", "ACCEPTED"}},
		{"po-request-2.xml", ack{"PO-000456", "CRM-00000002", "WO-00000002", "793.23", "ACCEPTED"}},
		{"po-request.xml", ack{"PO-000123", "CRM-00000003", "WO-00000003", "322.48", "ACCEPTED"}},
	} {
		status, body := post(t, f.ref.URL, ctXML, testdata(t, tc.file))
		if status != http.StatusOK {
			t.Fatalf("%d: status %d: %s", i, status, body)
		}
		var got ack
		if err := xml.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%d %s: ack %+v, want %+v", i, tc.file, got, tc.want)
		}
	}
}

func TestValuesAreEscaped(t *testing.T) {
	f := newFixture(t, nil, nil)
	req := bytes.Replace(testdata(t, "po-request.xml"), []byte("<po:poId>PO-000123</po:poId>"),
		[]byte("<po:poId>PO &lt;1&gt; &amp; <![CDATA[&2]]></po:poId>"), 1)
	req = bytes.Replace(req, []byte("Acme Widgets Ltd"), []byte("A&amp;B &lt;x&gt;"), 1)
	status, body := post(t, f.ref.URL, ctXML, req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var got ack
	if err := xml.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if got.PoID != "PO <1> & &2" {
		t.Fatalf("poId %q", got.PoID)
	}
	var crm struct {
		Name string `xml:"Body>recordPurchaseOrder>account>accountName"`
	}
	if err := xml.Unmarshal(f.crm.bodies[0], &crm); err != nil || crm.Name != "A&B <x>" {
		t.Fatalf("accountName %q, %v: %s", crm.Name, err, f.crm.bodies[0])
	}
}

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

func TestClientFaults(t *testing.T) {
	f := newFixture(t, nil, nil)
	po := testdata(t, "po-request.xml")
	drop := func(tag string) []byte {
		re := regexp.MustCompile(`(?s)<` + tag + `>.*?</` + tag + `>`)
		return re.ReplaceAll(po, nil)
	}
	for _, tc := range []struct {
		name, ctype string
		body        []byte
		want        string
	}{
		{"malformed", ctXML, po[:len(po)/2], "malformed XML"},
		{"junk", ctXML, []byte("junk"), "malformed XML"},
		{"empty", ctXML, nil, "malformed XML"},
		{"not soap", ctXML, []byte(`<po:purchaseOrder xmlns:po="urn:example:po"/>`), "not a SOAP 1.1 envelope"},
		{"empty body", ctXML, []byte(`<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body/></e:Envelope>`), "SOAP Body is empty"},
		{"other operation", ctXML, testdata(t, "crm-request.xml"), "unexpected body element {urn:example:crm}recordPurchaseOrder"},
		{"no poId", ctXML, drop("po:poId"), "po:poId"},
		{"no email", ctXML, drop("po:email"), "po:customer/po:email"},
		{"no country", ctXML, drop("po:country"), "po:shipTo/po:country"},
		{"no items", ctXML, regexp.MustCompile(`(?s)<po:items>.*</po:items>`).ReplaceAll(po, []byte("<po:items/>")), "no items"},
		{"item without sku", ctXML, bytes.Replace(po, []byte("<po:sku>SKU-B200</po:sku>"), nil, 1), "po:items/po:item[2]"},
		{"zero qty", ctXML, bytes.Replace(po, []byte("<po:qty>2</po:qty>"), []byte("<po:qty>0</po:qty>"), 1), "positive qty"},
		{"bad price", ctXML, bytes.Replace(po, []byte("19.99"), []byte("1e3"), 1), "non-negative unitPrice"},
		{"wrong content type", "application/json", po, "Content-Type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, f.ref.URL, tc.ctype, tc.body)
			if status != http.StatusInternalServerError {
				t.Fatalf("status %d: %s", status, body)
			}
			flt := parseFault(t, body)
			if flt.Code != "soapenv:Client" || !strings.Contains(flt.String, tc.want) {
				t.Fatalf("fault %+v, want Client with %q", flt, tc.want)
			}
		})
	}
	if len(f.crm.bodies) != 0 {
		t.Fatalf("CRM was called for bad requests: %d", len(f.crm.bodies))
	}
	// The next good request is served as usual.
	if status, body := post(t, f.ref.URL, ctXML, po); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
}

func TestServerFaults(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	faulty := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault><faultcode>soapenv:Server</faultcode><faultstring>ERP is down</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`)
	})
	empty := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><crm:recordPurchaseOrderResponse xmlns:crm="urn:example:crm"/></soapenv:Body></soapenv:Envelope>`)
	})
	http503 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) })

	for _, tc := range []struct {
		name     string
		crm, erp http.Handler
		crmURL   string
		want     string
	}{
		{name: "erp fault", erp: faulty, want: "ERP partner at"},
		{name: "crm without crmRef", crm: empty, want: "lacks {urn:example:crm}crmRef"},
		{name: "crm 503", crm: http503, want: "CRM partner at"},
		{name: "crm down", crmURL: downURL, want: "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.crm, tc.erp)
			url := f.ref.URL
			if tc.crmURL != "" {
				srv := httptest.NewServer(New(Options{CRMURL: tc.crmURL, ERPURL: "http://127.0.0.1:1/"}))
				defer srv.Close()
				url = srv.URL
			}
			status, body := post(t, url, ctXML, testdata(t, "po-request.xml"))
			if status != http.StatusInternalServerError {
				t.Fatalf("status %d: %s", status, body)
			}
			flt := parseFault(t, body)
			if flt.Code != "soapenv:Server" || !strings.Contains(flt.String, tc.want) {
				t.Fatalf("fault %+v, want Server with %q", flt, tc.want)
			}
		})
	}
}

func TestWrongMethod(t *testing.T) {
	f := newFixture(t, nil, nil)
	resp, err := http.Get(f.ref.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestConcurrentExchanges(t *testing.T) {
	f := newFixture(t, nil, nil)
	po := testdata(t, "po-request.xml")
	var wg sync.WaitGroup
	refs := make(chan string, 64)
	for range 64 {
		wg.Go(func() {
			status, body, err := postErr(f.ref.URL, ctXML, po)
			var a ack
			if err == nil {
				err = xml.Unmarshal(body, &a)
			}
			if status != 200 || err != nil || a.Total != "322.48" {
				t.Errorf("status %d, %v: %s", status, err, body)
				return
			}
			refs <- a.WorkOrderID
		})
	}
	wg.Wait()
	close(refs)
	seen := map[string]bool{}
	for r := range refs {
		if seen[r] {
			t.Fatalf("work order %s twice", r)
		}
		seen[r] = true
	}
}

func TestTotal(t *testing.T) {
	for _, tc := range []struct {
		items []item
		want  string
	}{
		{[]item{{qty: "2", unitPrice: "19.99"}, {qty: "1", unitPrice: "250.00"}, {qty: "10", unitPrice: "3.25"}}, "322.48"},
		{[]item{{qty: "1", unitPrice: "0.05"}}, "0.05"},
		{[]item{{qty: " 3 ", unitPrice: "0.005"}}, "0.02"},
		{[]item{{qty: "1", unitPrice: "0"}}, "0.00"},
		{[]item{{qty: "1", unitPrice: "1234567.5"}}, "1234567.50"},
	} {
		o := &order{items: tc.items}
		got, f := o.total()
		if f != nil || got != tc.want {
			t.Errorf("total(%v) = %q, %v; want %s", tc.items, got, f, tc.want)
		}
	}
	for _, bad := range []string{"", "x", "1e3", "Inf", "NaN", "+1", "1.2.3", "-1", "."} {
		o := &order{items: []item{{qty: bad, unitPrice: "1"}}}
		if _, f := o.total(); f == nil {
			t.Errorf("qty %q accepted", bad)
		}
	}
}

func BenchmarkDecodeOrder(b *testing.B) {
	po := testdata(b, "po-request.xml")
	o := &order{}
	b.ReportAllocs()
	for b.Loop() {
		o.reset()
		if f := decodeOrder(po, o); f != nil {
			b.Fatal(f)
		}
	}
}

func BenchmarkExchange(b *testing.B) {
	f := newFixture(b, nil, nil)
	po := testdata(b, "po-request.xml")
	b.ReportAllocs()
	for b.Loop() {
		if status, body := post(b, f.ref.URL, ctXML, po); status != 200 {
			b.Fatalf("%d %s", status, body)
		}
	}
}
