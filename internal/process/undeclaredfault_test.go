package process

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/soap"
)

// soapFault is a SOAP 1.1 fault envelope with faultcode soapenv:Server
// and the given detail content ("": no detail element).
func soapFault(detail string) string {
	d := ""
	if detail != "" {
		d = "<detail>" + detail + "</detail>"
	}
	return `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:app="urn:app"><soapenv:Body><soapenv:Fault>` +
		`<faultcode>soapenv:Server</faultcode><faultstring>no stock</faultstring>` + d + `</soapenv:Fault></soapenv:Body></soapenv:Envelope>`
}

// partnerServer is a real HTTP partner on loopback that answers every
// call with status and body (a text/xml body unless ctype says).
func partnerServer(t *testing.T, status int, ctype, body string) *httptest.Server {
	t.Helper()
	if ctype == "" {
		ctype = "text/xml"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// deploySOAP deploys the bundle in dir, its partner's address replaced
// by url, with the real SOAP client calling partners, in-memory or on a
// bbolt store.
func deploySOAP(t *testing.T, dir, url string, persistent bool) *Engine {
	t.Helper()
	w := filepath.Join(dir, "test.wsdl")
	b, err := os.ReadFile(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w, []byte(strings.Replace(string(b), "http://bob:pw-secret@partner.example/partner", url, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	client := soap.NewClient(soap.ClientOptions{Timeout: 5 * time.Second})
	path := ""
	if persistent {
		path = filepath.Join(t.TempDir(), "orchd.db")
	}
	return deployPartners(t, dir, path, client.Partner)
}

// A partner answering a SOAP fault its WSDL does not declare, over real
// HTTP, in-memory and persistent: a soapenv:Server fault whose detail
// holds one element is thrown as the fault the element names, with the
// element as its data, so a catch by that name (with or without a
// variable) and a catchAll run; under compatibility mode ODE it stays
// ext:activityFailure, as do a fault whose detail is empty, text only or
// several elements, and an HTTP error without a SOAP fault.
func TestUndeclaredPartnerFault(t *testing.T) {
	const app = ` xmlns:app="urn:app"`
	oneElem := soapFault(`<app:outOfStock><app:item>42</app:item></app:outOfStock>`)
	byName := pfScope(`<catch faultName="app:outOfStock"`+app+`>`+pfSet(`'by name'`)+`</catch>`+
		`<catch faultName="ext:activityFailure">`+pfSet(`'activityFailure'`)+`</catch>`, pfInvoke)
	tests := []struct {
		name, body   string
		status       int
		ctype, reply string
		compat       bool
		want         string
	}{
		{name: "catch by the detail element's name with its data",
			body: pfScope(`<catch faultName="app:outOfStock" faultVariable="f" faultElement="app:outOfStock"`+app+`>`+
				pfSet(`concat('caught ', $f/app:item)`)+`</catch>`, pfInvoke),
			status: 500, reply: oneElem, want: "caught 42"},
		{name: "catch by name without a variable", body: byName, status: 500, reply: oneElem, want: "by name"},
		{name: "catchAll", body: pfScope(`<catch faultName="ext:activityFailure">`+pfSet(`'activityFailure'`)+`</catch><catchAll>`+pfSet(`'all'`)+`</catchAll>`, pfInvoke),
			status: 500, reply: oneElem, want: "all"},
		{name: "HTTP 200 with the fault", body: byName, status: 200, reply: oneElem, want: "by name"},
		{name: "compat ode: activityFailure", body: byName, status: 500, reply: oneElem, compat: true, want: "activityFailure"},
		{name: "no detail: a failure", body: byName, status: 500, reply: soapFault(""), want: "activityFailure"},
		{name: "text-only detail: a failure", body: byName, status: 500, reply: soapFault("out of stock"), want: "activityFailure"},
		{name: "two detail elements: a failure", body: byName, status: 500, reply: soapFault(`<app:a/><app:b/>`), want: "activityFailure"},
		{name: "HTTP 500 without a SOAP fault: a failure", body: byName, status: 500, ctype: "text/plain", reply: "boom", want: "activityFailure"},
	}
	for _, tc := range tests {
		for _, persistent := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/persistent=%v", tc.name, persistent), func(t *testing.T) {
				srv := partnerServer(t, tc.status, tc.ctype, tc.reply)
				pb := pfBundle{body: tc.body, persistent: persistent}
				if tc.compat {
					pb.processExt = `<orchd:compat>ode</orchd:compat>`
				}
				e := deploySOAP(t, pb.write(t), srv.URL, persistent)
				r := dispatch(t, e, e.Processes()[0], testReq("U-1", "1", ""))
				if r.err != nil || r.out == nil {
					t.Fatalf("%+v", r)
				}
				if got := childText(r.out.Part("payload"), "a"); got != tc.want {
					t.Errorf("answer %q, want %q", got, tc.want)
				}
			})
		}
	}
}
