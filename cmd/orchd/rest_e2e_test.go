package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// itemServer is a small REST resource store: PUT /items/ID stores the
// value child of the body and answers 201, GET /items/ID answers the
// stored item or 404, DELETE /items/ID removes it (204).
type itemServer struct {
	mu      sync.Mutex
	items   map[string]string
	methods []string
}

func (s *itemServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/items/")
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods = append(s.methods, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
	switch r.Method {
	case http.MethodPut:
		s.items[id] = between(string(body), "value>", "</")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `<item xmlns="urn:items"><id>%s</id></item>`, id)
	case http.MethodGet:
		v, ok := s.items[id]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><item xmlns="urn:items"><id>%s</id><value>%s</value></item>`, id, v)
	case http.MethodDelete:
		delete(s.items, id)
		w.WriteHeader(http.StatusNoContent)
	}
}

// serveLoopback serves h on a loopback port until the test ends and
// returns its address.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// restProcess stores the request's n under its id with PUT, reads it back
// with GET, deletes it and GETs it again, and answers the status codes and
// the value read: "201 200 GOT 204 404".
const restProcess = `
  <extensions><extension namespace="http://www.apache.org/ode/bpel/extensions/bpel4restlight" mustUnderstand="yes"/></extensions>
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <scope xmlns:rest="http://www.apache.org/ode/bpel/extensions/bpel4restlight" xmlns:it="urn:items">
      <variables>
        <variable name="url" type="xsd:string"/>
        <variable name="c1" type="xsd:int"/><variable name="c2" type="xsd:int"/>
        <variable name="c3" type="xsd:int"/><variable name="c4" type="xsd:int"/>
        <variable name="item" type="xsd:anyType"/>
        <variable name="got" type="xsd:anyType"/>
      </variables>
      <sequence>
        <assign>
          <copy><from>concat('http://ITEMS/items/', $in.payload/tns:id)</from><to variable="url"/></copy>
          <copy><from><literal><it:item><it:value/></it:item></literal></from><to variable="item"/></copy>
          <copy><from>$in.payload/tns:n</from><to>$item/it:value</to></copy>
        </assign>
        <extensionActivity><rest:PUT uri="$bpelvar[url]" request="item" statusCode="c1"/></extensionActivity>
        <extensionActivity><rest:GET uri="$bpelvar[url]" response="got" statusCode="c2"/></extensionActivity>
        <extensionActivity><rest:DELETE uri="$bpelvar[url]" statusCode="c3"/></extensionActivity>
        <extensionActivity><rest:GET uri="$bpelvar[url]" statusCode="c4"/></extensionActivity>
        <assign><copy><from>concat($c1, ' ', $c2, ' ', $got/it:value, ' ', $c3, ' ', $c4)</from><to>$out.payload/tns:a</to></copy></assign>
      </sequence>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// The binary's REST client: a process calls a real REST server with ODE's
// bpel4restlight extension activities (declared mustUnderstand="yes"),
// through --partner-allow, with the methods and content type on the wire.
// (The activities' rules, a refused connection's fault among them, are
// the sem cases of internal/process/interp/testdata/sem/rest.)
func TestRESTExtensionActivities(t *testing.T) {
	items := &itemServer{items: map[string]string{}}
	deploy := t.TempDir()
	writeProcess(t, deploy, "Rest", "127.0.0.1:1", strings.ReplaceAll(restProcess, "ITEMS", serveLoopback(t, items)), true)
	o := startOrchd(t, "--deploy", deploy, "--partner-allow", "127.0.0.1") // the test's loopback partner

	r := callRun(t, o.base, "Rest", "K7", "GOT")
	if r.status != 200 || !strings.Contains(r.body, ">201 200 GOT 204 404<") {
		t.Fatalf("status %d body %s\n%s", r.status, r.body, o.log())
	}
	items.mu.Lock()
	got := strings.Join(items.methods, ", ")
	items.mu.Unlock()
	if want := "PUT /items/K7 application/xml, GET /items/K7 , DELETE /items/K7 , GET /items/K7 "; got != want {
		t.Errorf("the REST server got %q, want %q", got, want)
	}
}
