package htclient

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/orchd/orchd/internal/humantask"
)

// newServer serves the API over a task engine with a people file
// (mary: managers, joe: staff) and the expense bundle's approval task
// deployed, and creates one task of it.
func newServer(t *testing.T) (string, humantask.Task) {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	for _, p := range [][3]string{{"mary", "mary-pw", "managers"}, {"joe", "joe-pw", "staff"}} {
		h, err := bcrypt.GenerateFromPassword([]byte(p[1]), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, p[0]+":"+string(h)+":"+p[2])
	}
	pf := filepath.Join(dir, "people")
	if err := os.WriteFile(pf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	people, err := humantask.LoadDirectory(pf, nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks := humantask.New(humantask.Options{Directory: people})
	t.Cleanup(tasks.Close)
	if err := tasks.Deploy("expense", 1, filepath.Join("..", "b4p", "testdata", "expense")); err != nil {
		t.Fatal(err)
	}
	def, ok := tasks.Definition(xml.Name{Space: "urn:b4ptest", Local: "ApproveExpense"})
	if !ok {
		t.Fatal("no ApproveExpense")
	}
	task, err := tasks.Create(context.Background(), humantask.CreateRequest{Def: def, Input: `<tns:expense xmlns:tns="urn:b4ptest"><tns:id>h1</tns:id><tns:amount>5</tns:amount></tns:expense>`})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, &Handler{Tasks: tasks})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, task
}

// envelope is a SOAP 1.1 envelope with header and op, the prefixes api
// and htt declared.
func envelope(header, op string) string {
	return `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:api="` + API + `" xmlns:htt="` + Types + `">` + header + `<soapenv:Body>` + op + `</soapenv:Body></soapenv:Envelope>`
}

// call posts op (the body's element, in the API namespace as prefix
// api) as user, by HTTP Basic or (token) a UsernameToken.
func call(t *testing.T, url, user, pw string, token bool, op string) (int, string) {
	t.Helper()
	header := ""
	if token {
		header = `<soapenv:Header><wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"><wsse:UsernameToken><wsse:Username>` + user + `</wsse:Username><wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText">` + pw + `</wsse:Password></wsse:UsernameToken></wsse:Security></soapenv:Header>`
	}
	req, _ := http.NewRequest("POST", url+Path, strings.NewReader(envelope(header, op)))
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	if !token && user != "" {
		req.SetBasicAuth(user, pw)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestClientAPI runs a task through the API's operations in order, as
// WSO2 BPS's clients call them, each as its caller, with the answers
// and faults WSO2 gives. Every request and answer (and fault detail) is
// valid against the served WSDL's schema.
func TestClientAPI(t *testing.T) {
	url, task := newServer(t)
	schema := wsdlSchema(t)
	id := "<api:identifier>" + task.ID + "</api:identifier>"
	steps := []struct {
		name, user, pw string
		token          bool
		op             string
		code           int
		want           []string
	}{
		{"no credentials", "", "", false, `<api:getMyTaskAbstracts/>`, 401, []string{"authentication required"}},
		{"wrong password", "mary", "nope", false, `<api:getMyTaskAbstracts/>`, 401, []string{"authentication failed"}},
		{"joe sees nothing", "joe", "joe-pw", false, `<api:getMyTaskAbstracts><api:taskType>ALL</api:taskType></api:getMyTaskAbstracts>`, 200, []string{"<api:getMyTaskAbstractsResponse", "/>"}},
		{"mary sees the task (UsernameToken)", "mary", "mary-pw", true, `<api:getMyTaskAbstracts><api:status>READY</api:status></api:getMyTaskAbstracts>`, 200, []string{"<htt:id>" + task.ID + "</htt:id>", "<htt:status>READY</htt:status>", `<htt:name xmlns:tn="urn:b4ptest">tn:ApproveExpense</htt:name>`, "<htt:createdTime>", "<htt:packageName"}},
		{"joe may not claim", "joe", "joe-pw", false, `<api:claim>` + id + `</api:claim>`, 500, []string{"<api:illegalAccess ", "faultcode>soapenv:Client<"}},
		{"mary claims", "mary", "mary-pw", false, `<api:claim>` + id + `</api:claim>`, 200, []string{"<api:claimResponse"}},
		{"claimed twice", "mary", "mary-pw", false, `<api:claim>` + id + `</api:claim>`, 500, []string{"<api:illegalState ", "<api:status>RESERVED</api:status>", "<api:message>claim task "}},
		{"not skipable", "mary", "mary-pw", false, `<api:skip>` + id + `</api:skip>`, 500, []string{"<api:illegalOperation "}},
		{"a priority that is no number", "mary", "mary-pw", false, `<api:setPriority>` + id + `<api:priority>high</api:priority></api:setPriority>`, 500, []string{"<api:illegalArgument "}},
		{"set priority", "mary", "mary-pw", false, `<api:setPriority>` + id + `<api:priority>2</api:priority></api:setPriority>`, 200, []string{"<api:setPriorityResponse"}},
		{"comment", "mary", "mary-pw", false, `<api:addComment>` + id + `<api:text>looks &lt;fine&gt;</api:text></api:addComment>`, 200, []string{"<api:commentID>"}},
		{"comments", "mary", "mary-pw", false, `<api:getComments>` + id + `</api:getComments>`, 200, []string{"<htt:addedBy>mary</htt:addedBy>", "<htt:lastModifiedBy>mary</htt:lastModifiedBy>", "<htt:text>looks &lt;fine&gt;</htt:text>"}},
		{"input", "mary", "mary-pw", false, `<api:getInput>` + id + `</api:getInput>`, 200, []string{"<api:taskData><tns:expense", "<tns:amount>5</tns:amount>"}},
		{"start", "mary", "mary-pw", false, `<api:start>` + id + `</api:start>`, 200, []string{"<api:startResponse"}},
		{"complete", "mary", "mary-pw", false, `<api:complete>` + id + `<api:taskData><tns:decision xmlns:tns="urn:b4ptest"><tns:verdict>approved</tns:verdict></tns:decision></api:taskData></api:complete>`, 200, []string{"<api:completeResponse"}},
		{"output", "mary", "mary-pw", false, `<api:getOutput>` + id + `</api:getOutput>`, 200, []string{"<tns:verdict>approved</tns:verdict>"}},
		{"task info", "mary", "mary-pw", false, `<api:getTaskInfo>` + id + `</api:getTaskInfo>`, 200, []string{"<htt:status>COMPLETED</htt:status>", "<htt:priority>2</htt:priority>", "<htt:actualOwner>mary</htt:actualOwner>", "<htt:hasOutput>true</htt:hasOutput>", "<htt:numberOfComments>1</htt:numberOfComments>"}},
		{"an unknown operation", "mary", "mary-pw", false, `<api:frob/>`, 500, []string{"<api:illegalArgument "}},
	}
	for _, s := range steps {
		code, body := call(t, url, s.user, s.pw, s.token, s.op)
		if code != s.code {
			t.Errorf("%s: status %d, want %d: %s", s.name, code, s.code, body)
			continue
		}
		if s.name != "an unknown operation" && s.name != "a priority that is no number" { // invalid on purpose
			conforms(t, schema, s.name+": request", envelope("", s.op))
		}
		if code == http.StatusOK || strings.Contains(body, "<detail>") {
			conforms(t, schema, s.name+": answer", body)
		}
		for _, w := range s.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: answer lacks %q: %s", s.name, w, body)
			}
		}
	}
}

// FuzzDecode: decode never panics, and a request it takes has an
// operation element.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><claim/></s:Body></s:Envelope>`))
	f.Add([]byte(`<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Header><w:Security xmlns:w="` + wsse + `"><w:UsernameToken><w:Username>a</w:Username><w:Password>b</w:Password></w:UsernameToken></w:Security></s:Header><s:Body><x/></s:Body></s:Envelope>`))
	f.Add([]byte(`<Envelope/>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decode(b)
		if err == nil && r.op == nil {
			t.Fatal("a request without an operation")
		}
	})
}

// TestSignInsBounded: password checks are bounded over the API a client
// signs in through, not only inside the engine. With one check slot and
// a password hash that takes a while to check (bcrypt cost 11), clients
// signing in at once get the busy answer (503, a Server fault saying to
// try again) beside the one being checked, and the next sign-in once
// they are done is checked again.
func TestSignInsBounded(t *testing.T) {
	h, err := bcrypt.GenerateFromPassword([]byte("slow-pw"), 11)
	if err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(t.TempDir(), "people")
	if err := os.WriteFile(pf, []byte("slow:"+string(h)+":managers\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	people, err := humantask.LoadDirectory(pf, nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks := humantask.New(humantask.Options{Directory: people, MaxAuthChecks: 1})
	t.Cleanup(tasks.Close)
	mux := http.NewServeMux()
	mux.Handle(Path, &Handler{Tasks: tasks})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// A round is eight sign-ins at once. Whether two of them overlap
	// depends on the scheduler, so rounds go on (at most ten) until a
	// 200 and a 503 have both been seen; any other answer fails.
	const clients = 8
	round := func() (map[int]int, []string) {
		codes := make(chan int, clients)
		bodies := make(chan string, clients)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:api="` + API + `"><soapenv:Body><api:getMyTaskAbstracts/></soapenv:Body></soapenv:Envelope>`
				req, _ := http.NewRequest("POST", srv.URL+Path, strings.NewReader(env))
				req.Header.Set("Content-Type", "text/xml; charset=utf-8")
				req.SetBasicAuth("slow", "slow-pw")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					codes <- 0
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				codes <- resp.StatusCode
				bodies <- string(b)
			}()
		}
		close(start)
		wg.Wait()
		close(codes)
		close(bodies)
		n := map[int]int{}
		for c := range codes {
			n[c]++
		}
		var bs []string
		for b := range bodies {
			bs = append(bs, b)
		}
		return n, bs
	}
	seen := map[int]int{}
	busy := false
	for r := 0; r < 10 && (seen[http.StatusOK] == 0 || seen[http.StatusServiceUnavailable] == 0); r++ {
		n, bodies := round()
		if n[http.StatusOK]+n[http.StatusServiceUnavailable] != clients {
			t.Fatalf("answers by status %v: want 200s and 503s only", n)
		}
		for c, k := range n {
			seen[c] += k
		}
		for _, b := range bodies {
			busy = busy || strings.Contains(b, "try again")
		}
	}
	if seen[http.StatusOK] == 0 || seen[http.StatusServiceUnavailable] == 0 {
		t.Fatalf("answers by status over ten rounds %v: want at least one 200 and one 503", seen)
	}
	if !busy {
		t.Errorf("no busy answer says to try again")
	}
	if code, body := call(t, srv.URL, "slow", "slow-pw", false, `<api:getMyTaskAbstracts/>`); code != http.StatusOK {
		t.Errorf("a sign-in after the others: %d %s", code, body)
	}
}

// TestListFilters: a listing's taskType and genericHumanRole select as
// WS-HT says, and a value WS-HT does not define is illegalArgument.
func TestListFilters(t *testing.T) {
	url, task := newServer(t)
	list := func(query string) (int, int, string) {
		t.Helper()
		code, body := call(t, url, "mary", "mary-pw", false, `<api:getMyTaskAbstracts>`+query+`</api:getMyTaskAbstracts>`)
		return code, strings.Count(body, "<htt:id>"+task.ID+"</htt:id>"), body
	}
	steps := []struct {
		name, query string
		claimFirst  bool
		code, n     int
		want        string
	}{
		{"all types", `<api:taskType>ALL</api:taskType>`, false, 200, 1, ""},
		{"tasks", `<api:taskType>TASKS</api:taskType>`, false, 200, 1, ""},
		{"notifications only", `<api:taskType>NOTIFICATIONS</api:taskType>`, false, 200, 0, ""},
		{"a potential owner", `<api:genericHumanRole>potentialOwners</api:genericHumanRole>`, false, 200, 1, ""},
		{"not its actual owner before the claim", `<api:genericHumanRole>actualOwner</api:genericHumanRole>`, false, 200, 0, ""},
		{"its actual owner after the claim", `<api:genericHumanRole>actualOwner</api:genericHumanRole><api:status>RESERVED</api:status>`, true, 200, 1, ""},
		{"no business administrator", `<api:genericHumanRole>businessAdministrators</api:genericHumanRole><api:status>RESERVED</api:status>`, false, 200, 0, ""},
		{"an unknown role", `<api:genericHumanRole>owner</api:genericHumanRole>`, false, 500, 0, "<api:illegalArgument "},
		{"an unknown type", `<api:taskType>SOME</api:taskType>`, false, 500, 0, "<api:illegalArgument "},
	}
	for _, s := range steps {
		if s.claimFirst {
			if code, body := call(t, url, "mary", "mary-pw", false, `<api:claim><api:identifier>`+task.ID+`</api:identifier></api:claim>`); code != 200 {
				t.Fatalf("claim: %d %s", code, body)
			}
		}
		code, n, body := list(s.query)
		if code != s.code || n != s.n || !strings.Contains(body, s.want) {
			t.Errorf("%s: status %d, the task %d times, want %d and %d times (and %q): %s", s.name, code, n, s.code, s.n, s.want, body)
		}
	}
}
