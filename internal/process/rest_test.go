package process

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// restVars are the variables the REST test processes use besides in and
// out: the URL, the status code, an anyType and an element response, and
// an element request.
const restVars = bpelVariables + `
    <variable name="url" type="xsd:string"/>
    <variable name="code" type="xsd:int"/>
    <variable name="rsp" type="xsd:anyType"/>
    <variable name="rel" element="tns:resp"/>
    <variable name="rq" element="tns:req"/>`

// restBody replaces good-minimal's second assign: the URL comes from the
// request's text, then act runs, then out's a gets "code|string(rsp)".
const restBody = `<assign><copy><from>$in.payload/tns:text</from><to variable="url"/></copy>
      <copy><from>$in.payload</from><to variable="rq"/></copy></assign>
    %s
    <assign><copy><from>concat($code, '|', string($rsp), string($rel))</from><to>$out.payload/tns:a</to></copy></assign>`

// restBundle is good-minimal with the bpel4restlight extension declared
// (mustUnderstand="yes") and body in place of its second assign.
func restBundle(t *testing.T, body string) string {
	t.Helper()
	return editedBundle(t, "good-minimal", map[string][]string{"Test.bpel": {
		bpelProcessTag, bpelProcessTag + ` xmlns:rest="` + xmldoc.NSBPEL4RestLight + `" xmlns:ext="` + xmldoc.NSODEFunctions + `"`,
		`<partnerLinks>`, `<extensions><extension namespace="` + xmldoc.NSBPEL4RestLight + `" mustUnderstand="yes"/></extensions>
  <partnerLinks>`,
		bpelVariables, restVars,
		copyIDToOut, body,
	}})
}

// restAct wraps a bpel4restlight element in an extensionActivity.
func restAct(el string) string { return "<extensionActivity>" + el + "</extensionActivity>" }

func TestRESTCompile(t *testing.T) {
	tests := []struct {
		name         string
		act          string
		err          string // "" loads
		notSupported bool
	}{
		{name: "GET with $bpelvar loads", act: `<rest:GET uri="$bpelvar[url]" response="rsp" statusCode="code"/>`},
		{name: "requestUri and ODE attribute names load", act: `<rest:POST requestUri="http://h/x" requestPayload="rq" responsePayload="rel" accept="$bpelvar[url]"/>`},
		{name: "missing uri", act: `<rest:GET response="rsp"/>`, err: "Test.bpel:34: <GET>: <GET> needs a uri attribute"},
		{name: "unknown method", act: `<rest:PATCH uri="http://h/x"/>`, err: "Test.bpel:34: <PATCH>: unknown bpel4restlight activity <PATCH> (GET, POST, PUT or DELETE)"},
		{name: "relative uri", act: `<rest:GET uri="/x"/>`, err: `Test.bpel:34: <GET>: uri: "/x" is not an absolute http or https URL`},
		{name: "ftp uri", act: `<rest:DELETE uri="ftp://h/x"/>`, err: `Test.bpel:34: <DELETE>: uri: "ftp://h/x" is not an absolute http or https URL`},
		{name: "undeclared uri variable", act: `<rest:GET uri="$bpelvar[nope]"/>`, err: `Test.bpel:34: <GET>: uri: undeclared variable "nope"`},
		{name: "malformed reference", act: `<rest:GET uri="$bpelvar[url"/>`, err: `Test.bpel:34: <GET>: uri: "$bpelvar[url" is not a variable reference $bpelvar[name]`},
		{name: "uri from an element variable", act: `<rest:GET uri="$bpelvar[rel]"/>`, err: "Test.bpel:34: <GET>: uri: $bpelvar[rel] needs a variable of a simple type"},
		{name: "undeclared response", act: `<rest:GET uri="http://h/x" response="nope"/>`, err: `Test.bpel:34: <GET>: response: undeclared variable "nope"`},
		{name: "undeclared request", act: `<rest:PUT uri="http://h/x" request="nope"/>`, err: `Test.bpel:34: <PUT>: request: undeclared variable "nope"`},
		{name: "status into an element", act: `<rest:GET uri="http://h/x" statusCode="rel"/>`, err: "Test.bpel:34: <GET>: statusCode: variable rel must have a simple type"},
		{name: "message variable", act: `<rest:GET uri="http://h/x" response="out"/>`, notSupported: true,
			err: `Test.bpel:34: <GET>: not supported yet: response="out": a message variable in a bpel4restlight activity`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadBundle(restBundle(t, fmt.Sprintf(restBody, "\n"+restAct("\n"+tc.act))))
			if tc.err == "" {
				if err != nil {
					t.Fatalf("LoadBundle: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v\nwant one containing %q", err, tc.err)
			}
			if compile.IsNotSupported(err) != tc.notSupported {
				t.Errorf("IsNotSupported = %v, want %v", compile.IsNotSupported(err), tc.notSupported)
			}
		})
	}
}

// restServer is a REST partner recording what it was sent.
type restServer struct {
	mu   sync.Mutex
	last string // "METHOD path accept|content-type|body"
	// together is the barrier of /pair: two requests answer once both
	// came.
	together chan struct{}
}

func (s *restServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.last = r.Method + " " + r.URL.Path + " " + r.Header.Get("Accept") + "|" + r.Header.Get("Content-Type") + "|" + string(b)
	s.mu.Unlock()
	switch r.URL.Path {
	case "/echo":
		var esc strings.Builder
		_ = xml.EscapeText(&esc, b)
		fmt.Fprintf(w, "\n  <?xml version=\"1.0\"?><e:echo xmlns:e=\"urn:e\"><e:m>%s</e:m><e:b>%s</e:b></e:echo>\n", r.Method, esc.String())
	case "/missing":
		w.WriteHeader(http.StatusNotFound)
	case "/error":
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "<err>boom</err>")
	case "/text":
		fmt.Fprint(w, "plain words")
	case "/slow":
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	case "/pair":
		select {
		case s.together <- struct{}{}:
			fmt.Fprint(w, "together")
		case <-s.together:
			fmt.Fprint(w, "together")
		case <-time.After(3 * time.Second):
			fmt.Fprint(w, "alone")
		}
	}
}

func (s *restServer) lastRequest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// deployREST deploys restBundle(body) on an engine whose REST calls time
// out after timeout.
func deployREST(t *testing.T, body string, timeout time.Duration) (*Engine, *interp.Version) {
	t.Helper()
	procs, err := loadBundle(restBundle(t, body))
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(Options{HTTPTimeout: timeout})
	t.Cleanup(e.Close)
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e, procs[0]
}

const reqXML = `<tns:req xmlns:tns="urn:test"><tns:id>I</tns:id><tns:n>1</tns:n><tns:text>%s</tns:text></tns:req>`

func TestRESTRuntime(t *testing.T) {
	srv := &restServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // refuses connections
	tests := []struct {
		name, act, url string
		want           string // out's a
		sent           string // what the server got ("" skips the check)
		fault          string // the uncaught fault's message contains this
	}{
		{name: "GET stores the XML answer and the status", url: hs.URL + "/echo",
			act:  `<rest:GET uri="$bpelvar[url]" accept="text/xml" response="rsp" statusCode="code"/>`,
			want: "200|GET", sent: "GET /echo text/xml||"},
		{name: "POST sends the element variable", url: hs.URL + "/echo",
			act:  `<rest:POST uri="$bpelvar[url]" request="rq" response="rsp" statusCode="code"/>`,
			want: "200|POST" + fmt.Sprintf(reqXML, hs.URL+"/echo"),
			sent: "POST /echo application/xml|application/xml|" + fmt.Sprintf(reqXML, hs.URL+"/echo")},
		{name: "PUT sends the static payload when the request is uninitialized", url: hs.URL + "/echo",
			act:  `<rest:PUT uri="$bpelvar[url]" request="rel" response="rsp" contentType="text/xml"><tns:resp><tns:a>static</tns:a></tns:resp></rest:PUT>`,
			want: `NaN|PUT<tns:resp xmlns:tns="urn:test"><tns:a>static</tns:a></tns:resp>`,
			sent: `PUT /echo application/xml|text/xml|<tns:resp xmlns:tns="urn:test"><tns:a>static</tns:a></tns:resp>`},
		{name: "POST with nothing to send sends no body", url: hs.URL + "/echo",
			act: `<rest:POST uri="$bpelvar[url]" statusCode="code"/>`, want: "200|", sent: "POST /echo application/xml||"},
		{name: "DELETE 404 with no body keeps the response variable", url: hs.URL + "/missing",
			act: `<rest:DELETE uri="$bpelvar[url]" response="rel" statusCode="code"/>`, want: "404|", sent: "DELETE /missing application/xml||"},
		{name: "a literal uri", url: "unused",
			act: `<rest:GET uri="` + hs.URL + `/error" response="rsp" statusCode="code"/>`, want: "500|boom"},
		{name: "text into anyType", url: hs.URL + "/text",
			act: `<rest:GET uri="$bpelvar[url]" response="rsp" statusCode="code"/>`, want: "200|plain words"},
		{name: "text into an element variable faults", url: hs.URL + "/text",
			act:   `<rest:GET uri="$bpelvar[url]" response="rel"/>`,
			fault: "bpel4restlight GET: response for variable rel is not XML"},
		{name: "connection refused faults", url: closed.URL + "/x",
			act:   `<rest:POST uri="$bpelvar[url]" request="rq"/>`,
			fault: "bpel4restlight POST: Post \"" + closed.URL + "/x\""},
		{name: "timeout faults", url: hs.URL + "/slow",
			act:   `<rest:GET uri="$bpelvar[url]"/>`,
			fault: "context deadline exceeded"},
		{name: "a bad URL from a variable faults", url: "not a url",
			act:   `<rest:GET uri="$bpelvar[url]"/>`,
			fault: `bpel4restlight GET: uri from variable url: "not a url" is not an absolute http or https URL`},
		{name: "the fault can be caught", url: closed.URL,
			act:  `<scope><faultHandlers><catch faultName="ext:bpel4RestExtensions"><assign><copy><from>'caught'</from><to variable="rsp"/></copy></assign></catch></faultHandlers><rest:GET uri="$bpelvar[url]"/></scope>`,
			want: "NaN|caught"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			act := restAct(tc.act)
			if strings.HasPrefix(tc.act, "<scope>") {
				act = strings.Replace(tc.act, `<rest:GET uri="$bpelvar[url]"/>`, restAct(`<rest:GET uri="$bpelvar[url]"/>`), 1)
			}
			e, p := deployREST(t, fmt.Sprintf(restBody, act), 500*time.Millisecond)
			r := dispatch(t, e, p, testReq("I", "1", tc.url))
			if tc.fault != "" {
				if r.fault == nil {
					t.Fatalf("want fault %q; err=%v out=%v", tc.fault, r.err, r.out)
				}
				if r.fault.Name != interp.RestFault || !strings.Contains(r.fault.Error(), tc.fault) {
					t.Fatalf("fault %s %q, want %s containing %q", r.fault.Name, r.fault.Error(), interp.RestFault, tc.fault)
				}
				return
			}
			if r.err != nil || r.fault != nil || r.out == nil {
				t.Fatalf("err=%v fault=%v out=%v", r.err, r.fault, r.out)
			}
			got := ""
			if a := r.out.Parts["payload"].FindElement("./a"); a != nil {
				got = a.Text()
			}
			if got != tc.want {
				t.Errorf("answer %q\nwant   %q", got, tc.want)
			}
			if tc.sent != "" && srv.lastRequest() != tc.sent {
				t.Errorf("server got %q\nwant          %q", srv.lastRequest(), tc.sent)
			}
		})
	}
}

// Two REST calls in the branches of a flow are in flight at once: the
// server answers /pair "together" only when both requests are there.
func TestRESTCallsOverlap(t *testing.T) {
	srv := &restServer{together: make(chan struct{})}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	act := `<flow>` + restAct(`<rest:GET uri="$bpelvar[url]" response="rsp"/>`) +
		restAct(`<rest:GET uri="$bpelvar[url]" statusCode="code"/>`) + `</flow>`
	e, p := deployREST(t, fmt.Sprintf(restBody, act), 10*time.Second)
	r := dispatch(t, e, p, testReq("I", "1", hs.URL+"/pair"))
	if r.err != nil || r.fault != nil || r.out == nil {
		t.Fatalf("err=%v fault=%v out=%v", r.err, r.fault, r.out)
	}
	if got := r.out.Parts["payload"].FindElement("./a").Text(); got != "200|together" {
		t.Errorf("answer %q, want 200|together (both calls in flight at once)", got)
	}
}

// A persistent instance the store holds is checkpointed before a POST
// (not safe to repeat after a crash) but not before a GET: one commit
// more. A new instance whose client is not answered yet is checkpointed
// before neither (nothing stored could repeat the call: docs/architecture.md).
func TestRESTCheckpointsBeforeUnsafeCalls(t *testing.T) {
	hs := httptest.NewServer(&restServer{})
	defer hs.Close()
	reply := `<reply partnerLink="client" operation="run" variable="out"/>`
	tests := []struct {
		name string
		body string // the REST activity is act
		more int32  // POST's commits beyond GET's
	}{
		{"unanswered new instance", "act", 0},
		// The reply leaves with the checkpoint before the first call
		// (either method); the second call is the one guarded or not.
		{"answered, then two calls", reply + " act act", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			commits := map[string]int32{}
			for _, method := range []string{"GET", "POST"} {
				act := restAct(`<rest:` + method + ` uri="$bpelvar[url]" statusCode="code"/>`)
				dir := restBundle(t, fmt.Sprintf(restBody, strings.ReplaceAll(tc.body, "act", act)))
				edits := [][2]string{{"<in-memory>true", "<in-memory>false"}}
				if strings.HasPrefix(tc.body, reply) {
					edits = append(edits, [2]string{"  " + reply + "\n  </sequence>", "  </sequence>"})
				}
				for _, ed := range edits {
					file := "deploy.xml"
					if strings.Contains(ed[0], "reply") {
						file = "Test.bpel"
					}
					fp := filepath.Join(dir, file)
					b, err := os.ReadFile(fp)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Contains(b, []byte(ed[0])) {
						t.Fatalf("%s lacks %q", file, ed[0])
					}
					if err := os.WriteFile(fp, bytes.Replace(b, []byte(ed[0]), []byte(ed[1]), 1), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				procs, err := loadBundle(dir)
				if err != nil {
					t.Fatal(err)
				}
				st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{MaxBatchDelay: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				cs := &countingStore{Store: st}
				e := NewEngine(Options{Store: cs})
				defer e.Close()
				if err := e.Deploy(procs...); err != nil {
					t.Fatal(err)
				}
				r := dispatch(t, e, procs[0], testReq("I", "1", hs.URL+"/echo"))
				if r.err != nil || r.fault != nil || r.out == nil {
					t.Fatalf("%s: err=%v fault=%v out=%v", method, r.err, r.fault, r.out)
				}
				if a := r.out.Parts["payload"].FindElement("./a").Text(); tc.more == 0 && a != "200|" {
					t.Fatalf("%s: answer %q", method, a)
				}
				commits[method] = cs.commits.Load()
			}
			if commits["POST"] != commits["GET"]+tc.more {
				t.Errorf("commits: GET %v, POST %v; want %d more for POST (the checkpoint before the call)", commits["GET"], commits["POST"], tc.more)
			}
		})
	}
}

// countingStore counts the commits made to a real store.
type countingStore struct {
	*persist.Store
	commits atomic.Int32
}

func (s *countingStore) Commit(cps ...*persist.Checkpoint) error {
	s.commits.Add(1)
	return s.Store.Commit(cps...)
}
