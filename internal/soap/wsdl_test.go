package soap

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/publicurl"
)

// shopDocs is a bundle whose WSDL defines two ports orchd serves (SOAP
// 1.1 and 1.2, the second with credentials in its bundle address), a
// partner's port, and a schema that includes another from a directory.
func shopDocs() *exchange.WSDLDocs {
	return &exchange.WSDLDocs{Main: "shop.wsdl", Docs: map[string][]byte{
		"shop.wsdl": []byte(`<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"` +
			` xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:shop">` +
			`<wsdl:types><xsd:schema><xsd:import namespace="urn:shop" schemaLocation="types/shop.xsd"/></xsd:schema></wsdl:types>` +
			`<wsdl:service name="ShopService">` +
			`<wsdl:port name="ShopPort" binding="b"><soap:address location="http://localhost:8080/processes/Shop"/></wsdl:port>` +
			`<wsdl:port name="ShopPort12" binding="b12"><soap12:address location="http://u:secret@localhost:8080/processes/Shop12"/></wsdl:port>` +
			`</wsdl:service>` +
			`<wsdl:service name="Partner"><wsdl:port name="P" binding="b"><soap:address location="http://u:pw@partner:9000/p"/></wsdl:port></wsdl:service>` +
			`</wsdl:definitions>`),
		"types/shop.xsd":   []byte(`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:shop"><xs:include schemaLocation="common.xsd"/></xs:schema>`),
		"types/common.xsd": []byte(`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:shop"/>`),
	}}
}

func shopServer(t *testing.T, public *publicurl.Resolver, tls bool) *httptest.Server {
	t.Helper()
	s := NewServer(ServerOptions{Public: public})
	d := &testDispatcher{}
	docs := shopDocs()
	for _, ep := range []*exchange.Endpoint{
		{Process: exchange.QName{Space: "urn:p", Local: "Shop"}, Service: exchange.QName{Space: "urn:shop", Local: "ShopService"},
			Port: "ShopPort", Path: "/processes/Shop", Version: exchange.SOAP11, WSDL: docs},
		{Process: exchange.QName{Space: "urn:p", Local: "Shop"}, Service: exchange.QName{Space: "urn:shop", Local: "ShopService"},
			Port: "ShopPort12", Path: "/processes/Shop12", Version: exchange.SOAP12, WSDL: docs},
	} {
		if err := s.Handle(ep, d); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewUnstartedServer(s)
	if tls {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	t.Cleanup(hs.Close)
	return hs
}

// TestWSDLAddress: ?wsdl names each port orchd serves at the base URL the
// request reached (scheme, Host, port), or the public URL, or trusted
// forwarded headers; a partner's port keeps its bundle address; no
// credentials appear; imports are references relative to the endpoint.
func TestWSDLAddress(t *testing.T) {
	for _, tc := range []struct {
		name          string
		public        string
		trust, tls    bool
		host          string
		headers       map[string]string
		base          string // "" means the test server's own URL
		notInDocument string
	}{
		{name: "the address reached"},
		{name: "over TLS", tls: true},
		{name: "the Host header", host: "orchd.example.com:8081", base: "http://orchd.example.com:8081"},
		{name: "an invalid Host is not echoed", host: `x"y`, notInDocument: `x"y`},
		{name: "forwarded headers untrusted", headers: map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}, notInDocument: "evil.example"},
		{name: "forwarded headers trusted", trust: true, headers: map[string]string{"X-Forwarded-Host": "api.example.com", "X-Forwarded-Proto": "https"}, base: "https://api.example.com"},
		{name: "public URL", public: "https://api.example.com/orchd", trust: true, headers: map[string]string{"X-Forwarded-Host": "evil.example"}, base: "https://api.example.com/orchd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := publicurl.New(tc.public, tc.trust)
			if err != nil {
				t.Fatal(err)
			}
			hs := shopServer(t, rs, tc.tls)
			base := tc.base
			if base == "" {
				base = hs.URL
			}
			get := func(q string) string {
				t.Helper()
				req, _ := http.NewRequest(http.MethodGet, hs.URL+"/processes/Shop"+q, nil)
				if tc.host != "" {
					req.Host = tc.host
				}
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				resp, err := hs.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("GET %s: %d %s", q, resp.StatusCode, b)
				}
				return string(b)
			}
			main := get("?wsdl")
			for _, want := range []string{
				`<soap:address location="` + base + `/processes/Shop"/>`,
				`<soap12:address location="` + base + `/processes/Shop12"/>`,
				`<soap:address location="http://***@partner:9000/p"/>`,
				`schemaLocation="Shop?wsdl=types%2Fshop.xsd"`,
			} {
				if !strings.Contains(main, want) {
					t.Errorf("?wsdl lacks %s:\n%s", want, main)
				}
			}
			for _, bad := range []string{"secret", "u:pw", "localhost:8080", tc.notInDocument} {
				if bad != "" && strings.Contains(main, bad) {
					t.Errorf("?wsdl has %q:\n%s", bad, main)
				}
			}
			if x := get("?wsdl=types%2Fshop.xsd"); !strings.Contains(x, `schemaLocation="Shop?wsdl=types%2Fcommon.xsd"`) {
				t.Errorf("nested include not relative:\n%s", x)
			}
			get("?wsdl=types%2Fcommon.xsd")
		})
	}
}

func TestRelativeRef(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"/processes/PurchaseOrder", "PurchaseOrder?wsdl="},
		{"/a/b c", "b%20c?wsdl="},
		{"/svc/", "./?wsdl="},
		{"/x/a:b", "./a:b?wsdl="},
	} {
		if got := relativeRef(tc.path); got != tc.want {
			t.Errorf("relativeRef(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
