package htclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/publicurl"
	"github.com/orchd/orchd/internal/xsd"
)

const (
	nsWSDL = "http://schemas.xmlsoap.org/wsdl/"
	nsXSD  = "http://www.w3.org/2001/XMLSchema"
	nsSOAP = "http://schemas.xmlsoap.org/wsdl/soap/"
)

// wsdlSchema compiles the schemas of the embedded WSDL with orchd's
// validator.
func wsdlSchema(t *testing.T) *xsd.Set {
	t.Helper()
	set := xsd.Load(func(string) ([]byte, error) { return []byte(wsdlDoc), nil }, []string{WSDLName})
	if p := set.Problems(); len(p) > 0 {
		t.Fatalf("the WSDL's schemas: %v", p)
	}
	return set
}

// conforms fails t unless the body element of env (the detail's element,
// for a fault) is valid against its declaration in set.
func conforms(t *testing.T, set *xsd.Set, what, env string) {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(env); err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	el := doc.FindElement("/Envelope/Body/*")
	if el != nil && el.Tag == "Fault" {
		el = el.FindElement("detail/*")
	}
	if el == nil {
		t.Errorf("%s: no body element to check: %s", what, env)
		return
	}
	d, err := set.Element(xsd.QName{Space: el.NamespaceURI(), Local: el.Tag})
	if err != nil {
		t.Errorf("%s: %s is not declared: %v", what, el.Tag, err)
		return
	}
	if err := set.Validate(d, el); err != nil {
		t.Errorf("%s: not valid against the WSDL: %v\n%s", what, err, env)
	}
}

// TestWSDLOperations: the WSDL's port type and binding name exactly the
// operations the handler dispatches, each with its request and response
// element declared in the embedded schema (which orchd's validator
// compiles), WSO2's SOAP action, and the four WS-HT faults, whose
// elements are declared too.
func TestWSDLOperations(t *testing.T) {
	set := wsdlSchema(t)
	doc := etree.NewDocument()
	if err := doc.ReadFromString(wsdlDoc); err != nil {
		t.Fatal(err)
	}
	var served []string
	for name := range operations() {
		served = append(served, name)
	}
	sort.Strings(served)
	names := func(path string) []string {
		var out []string
		for _, e := range doc.FindElements(path) {
			out = append(out, e.SelectAttrValue("name", ""))
		}
		sort.Strings(out)
		return out
	}
	if got := names("/definitions/portType/operation"); !slices.Equal(got, served) {
		t.Errorf("port type operations %v, handler serves %v", got, served)
	}
	if got := names("/definitions/binding/operation"); !slices.Equal(got, served) {
		t.Errorf("binding operations %v, handler serves %v", got, served)
	}
	messages := map[string]string{} // message name -> its part's element
	for _, m := range doc.FindElements("/definitions/message") {
		messages[m.SelectAttrValue("name", "")] = m.FindElement("part").SelectAttrValue("element", "")
	}
	declared := func(local string) {
		t.Helper()
		if _, err := set.Element(xsd.QName{Space: API, Local: local}); err != nil {
			t.Errorf("element %s: %v", local, err)
		}
	}
	for _, op := range doc.FindElements("/definitions/portType/operation") {
		name := op.SelectAttrValue("name", "")
		in, out := op.FindElement("input").SelectAttrValue("message", ""), op.FindElement("output").SelectAttrValue("message", "")
		if messages[strings.TrimPrefix(in, "api:")] != "api:"+name || messages[strings.TrimPrefix(out, "api:")] != "api:"+name+"Response" {
			t.Errorf("%s: input %s, output %s: want the elements api:%s and api:%sResponse", name, in, out, name, name)
		}
		declared(name)
		declared(name + "Response")
		var faults []string
		for _, f := range op.FindElements("fault") {
			faults = append(faults, f.SelectAttrValue("name", ""))
			declared(strings.TrimSuffix(strings.TrimPrefix(messages[strings.TrimPrefix(f.SelectAttrValue("message", ""), "api:")], "api:"), "Fault"))
		}
		sort.Strings(faults)
		if want := []string{"illegalAccessFault", "illegalArgumentFault", "illegalOperationFault", "illegalStateFault"}; !slices.Equal(faults, want) {
			t.Errorf("%s: faults %v, want %v", name, faults, want)
		}
	}
	for _, op := range doc.FindElements("/definitions/binding/operation") {
		name := op.SelectAttrValue("name", "")
		if a := op.FindElement("operation").SelectAttrValue("soapAction", ""); a != API+"/"+name {
			t.Errorf("%s: soapAction %q", name, a)
		}
	}
	if n := strings.Count(wsdlDoc, addressSlot); n != 1 {
		t.Errorf("the address slot is in the WSDL %d times, want once", n)
	}
}

// TestWSDLServed: GET ?wsdl (any case of the key, or naming the
// document) serves the WSDL whose soap:address is the address the
// request reached: the Host it named, or the operator's public URL.
func TestWSDLServed(t *testing.T) {
	public, err := publicurl.New("https://bps.example.com/orchd", false)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, &Handler{})
	mux.Handle("/public"+Path, http.StripPrefix("/public", &Handler{Public: public}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	get := func(method, url, host string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	address := func(body string) string {
		doc := etree.NewDocument()
		if err := doc.ReadFromString(body); err != nil {
			return "not XML: " + err.Error()
		}
		a := doc.FindElement("/definitions/service/port/address")
		if a == nil || a.NamespaceURI() != nsSOAP {
			return "no soap:address"
		}
		return a.SelectAttrValue("location", "")
	}
	for _, c := range []struct{ name, method, path, host string }{
		{"?wsdl", "GET", Path + "?wsdl", ""},
		{"?WSDL", "GET", Path + "?WSDL", ""},
		{"?wsdl=the document", "GET", Path + "?wsdl=" + WSDLName, ""},
		{"Host", "GET", Path + "?wsdl", "tasks.example.org:8443"},
		{"public URL", "GET", "/public" + Path + "?wsdl", ""},
	} {
		code, h, body := get(c.method, srv.URL+c.path, c.host)
		want := srv.URL + Path
		switch {
		case c.host != "":
			want = "http://" + c.host + Path
		case strings.HasPrefix(c.path, "/public"):
			want = "https://bps.example.com/orchd" + Path
		}
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/xml") {
			t.Errorf("%s: %d %s: %s", c.name, code, h.Get("Content-Type"), body)
			continue
		}
		if got := address(body); got != want {
			t.Errorf("%s: soap:address %q, want %q", c.name, got, want)
		}
		if got := strings.Replace(body, want, addressSlot, 1); got != wsdlDoc {
			t.Errorf("%s: the served WSDL is not the embedded one with its address", c.name)
		}
	}
	if code, h, body := get("HEAD", srv.URL+Path+"?wsdl", ""); code != http.StatusOK || body != "" || h.Get("Content-Length") == "" {
		t.Errorf("HEAD ?wsdl: %d, length %q, body %q", code, h.Get("Content-Length"), body)
	}
	if code, _, _ := get("GET", srv.URL+Path+"?wsdl=types.xsd", ""); code != http.StatusNotFound {
		t.Errorf("?wsdl=types.xsd: %d, want 404", code)
	}
	if code, h, _ := get("GET", srv.URL+Path, ""); code != http.StatusMethodNotAllowed || h.Get("Allow") != "POST" {
		t.Errorf("GET without ?wsdl: %d, Allow %q", code, h.Get("Allow"))
	}
	if code, h, _ := get("PUT", srv.URL+Path, ""); code != http.StatusMethodNotAllowed || h.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("PUT: %d, Allow %q", code, h.Get("Allow"))
	}
}

// TestCompleteTaskDataText: complete takes the output as escaped XML text
// in taskData, as WSO2 BPS's clients send it (WSO2's WSDL types it
// xsd:string); text that is not one element is an illegalArgument and
// leaves the task in progress.
func TestCompleteTaskDataText(t *testing.T) {
	url, task := newServer(t)
	id := "<api:identifier>" + task.ID + "</api:identifier>"
	for _, s := range []struct {
		op   string
		code int
		want string
	}{
		{`<api:claim>` + id + `</api:claim>`, 200, "<api:claimResponse"},
		{`<api:start>` + id + `</api:start>`, 200, "<api:startResponse"},
		{`<api:complete>` + id + `<api:taskData>not XML</api:taskData></api:complete>`, 500, "<api:illegalArgument "},
		{`<api:complete>` + id + `<api:taskData>&lt;a/&gt;&lt;b/&gt;</api:taskData></api:complete>`, 500, "<api:illegalArgument "},
		{`<api:getTaskInfo>` + id + `</api:getTaskInfo>`, 200, "<htt:status>IN_PROGRESS</htt:status>"},
		{`<api:complete>` + id + `<api:taskData>&lt;tns:decision xmlns:tns="urn:b4ptest"&gt;&lt;tns:verdict&gt;approved&lt;/tns:verdict&gt;&lt;/tns:decision&gt;</api:taskData></api:complete>`, 200, "<api:completeResponse"},
		{`<api:getOutput>` + id + `</api:getOutput>`, 200, "<tns:verdict>approved</tns:verdict>"},
	} {
		code, body := call(t, url, "mary", "mary-pw", false, s.op)
		if code != s.code || !strings.Contains(body, s.want) {
			t.Errorf("%s: %d, want %d with %q: %s", s.op, code, s.code, s.want, body)
		}
	}
}
