package inbox

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/orchd/orchd/internal/b4p"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/soap"
)

// world is orchd's parts as serve wires them for the inbox: the
// expense bundle (internal/b4p's, its people activity with an inline
// task for the managers group) on a process engine, the task engine
// with a people file, and one loopback server for the SOAP endpoints
// and the inbox.
type world struct {
	tasks *humantask.Engine
	url   string
}

// The people of the file: mary is a manager, joe is not.
const (
	maryPassword = "mary-secret-1"
	joePassword  = "joe-secret-2"
)

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"expense.bpel", "expense.wsdl", "expense.ht", "deploy.xml"} {
		b, err := os.ReadFile(filepath.Join("..", "b4p", "testdata", "expense", f))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "INMEMORY", "true", 1)
		s = strings.Replace(s, "            TASK\n", `<b4p:localTask reference="tns:ApproveExpense"/>`+"\n", 1)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	peopleFile := filepath.Join(t.TempDir(), "people")
	var lines []string
	for _, p := range [][3]string{{"mary", maryPassword, "managers"}, {"joe", joePassword, "staff"}} {
		h, err := bcrypt.GenerateFromPassword([]byte(p[1]), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, p[0]+":"+string(h)+":"+p[2])
	}
	if err := os.WriteFile(peopleFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	people, err := humantask.LoadDirectory(peopleFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ext *b4p.People
	tasks := humantask.New(humantask.Options{Directory: people, Ended: func(tk humantask.Task) error { return ext.Ended(tk) }, CallbackRetry: 10 * time.Millisecond})
	t.Cleanup(tasks.Close)
	ext = b4p.New(b4p.Options{Tasks: tasks})
	if err := tasks.Deploy("expense", 1, dir); err != nil {
		t.Fatal(err)
	}
	plans, err := compile.LoadBundleWith(dir, compile.LoadOptions{Extensions: ext.Extensions()})
	if err != nil {
		t.Fatal(err)
	}
	e := process.NewEngine(process.Options{})
	t.Cleanup(e.Close)
	ext.Bind(tasks, e)
	if err := e.Deploy(interp.NewVersions(plans)...); err != nil {
		t.Fatal(err)
	}
	front := soap.NewServer(soap.ServerOptions{})
	for _, ep := range plans[0].Endpoints {
		if err := front.Handle(ep, e); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/processes/", front)
	mux.Handle("/console/inbox/", New(Options{Tasks: tasks, Outputs: &BundleSchemas{Tasks: tasks, DirOf: func(string) string { return dir }}}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &world{tasks: tasks, url: srv.URL}
}

func (w *world) soap(t *testing.T, op, body string) string {
	t.Helper()
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="urn:b4ptest"><soapenv:Body>` + body + `</soapenv:Body></soapenv:Envelope>`
	req, _ := http.NewRequest("POST", w.url+"/processes/expense", strings.NewReader(env))
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", "urn:b4ptest#"+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// submit starts an expense and waits until its task is there.
func (w *world) submit(t *testing.T, id, amount string) humantask.Task {
	t.Helper()
	if b := w.soap(t, "submit", `<tns:req><tns:id>`+id+`</tns:id><tns:amount>`+amount+`</tns:amount></tns:req>`); !strings.Contains(b, "submitted") {
		t.Fatalf("submit: %s", b)
	}
	mary := humantask.Identity{User: "mary", Groups: []string{"managers"}}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		ts, err := w.tasks.List(context.Background(), mary, humantask.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range ts {
			if strings.Contains(tk.Input, ">"+id+"<") {
				return tk
			}
		}
	}
	t.Fatalf("no task for expense %s", id)
	return humantask.Task{}
}

// client is a browser-like HTTP client with its own cookie jar that
// does not follow redirects.
func client(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (w *world) signIn(t *testing.T, c *http.Client, user, password string) *http.Response {
	t.Helper()
	resp, err := c.PostForm(w.url+"/console/inbox/login", url.Values{"user": {user}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestInboxSafety: people sign in with their own passwords, see only
// their tasks, and a form post without the session's CSRF token or
// from another origin does nothing.
func TestInboxSafety(t *testing.T) {
	w := newWorld(t)
	task := w.submit(t, "s1", "10")
	base := w.url + "/console/inbox/"

	if resp := w.signIn(t, client(t), "mary", "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", resp.StatusCode)
	}
	mary := client(t)
	resp := w.signIn(t, mary, "mary", maryPassword)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || len(cookie.Value) < 32 {
		t.Fatalf("sign-in: %d, cookie %+v: want a 303 and an HttpOnly, SameSite=Strict session cookie", resp.StatusCode, cookie)
	}
	if code, body := get(t, mary, base); code != 200 || !strings.Contains(body, "task?id="+task.ID) {
		t.Errorf("mary's list: %d, without her task %s", code, task.ID)
	}
	joe := client(t)
	w.signIn(t, joe, "joe", joePassword)
	if _, body := get(t, joe, base); strings.Contains(body, task.ID) {
		t.Errorf("joe (not a manager) sees the managers' task")
	}
	if code, _ := get(t, joe, base+"task?id="+task.ID); code != http.StatusNotFound {
		t.Errorf("joe opening the task: %d, want 404", code)
	}
	if code, _ := get(t, client(t), base+"task?id="+task.ID); code != http.StatusSeeOther {
		t.Errorf("no session opening the task: %d, want a redirect to sign in", code)
	}

	_, page := get(t, mary, base+"task?id="+task.ID)
	csrf := between(page, `name="csrf" value="`, `"`)
	post := func(c *http.Client, form url.Values, origin string) int {
		req, _ := http.NewRequest("POST", base+"task", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		origin string
		want   int
	}{
		{"no CSRF token", url.Values{"id": {task.ID}, "op": {"claim"}}, "", http.StatusForbidden},
		{"another session's token", url.Values{"id": {task.ID}, "op": {"claim"}, "csrf": {"0123"}}, "", http.StatusForbidden},
		{"another origin", url.Values{"id": {task.ID}, "op": {"claim"}, "csrf": {csrf}}, "http://evil.example", http.StatusForbidden},
	} {
		if got := post(mary, tc.form, tc.origin); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if got, _ := w.tasks.Get(context.Background(), humantask.System(), task.ID); got.State != humantask.Ready {
		t.Fatalf("after the refused posts the task is %s, want READY", got.State)
	}
	if got := post(mary, url.Values{"id": {task.ID}, "op": {"claim"}, "csrf": {csrf}}, w.url); got != http.StatusSeeOther {
		t.Errorf("mary's claim: %d", got)
	}
	if got, _ := w.tasks.Get(context.Background(), humantask.System(), task.ID); got.State != humantask.Reserved || got.ActualOwner != "mary" {
		t.Errorf("after mary's claim the task is %s owned by %q", got.State, got.ActualOwner)
	}
	// An output the schema refuses is not taken, and the form says why.
	bad := url.Values{"id": {task.ID}, "op": {"complete"}, "csrf": {csrf}, "f.decision.verdict": {"maybe"}}
	if got := post(mary, bad, ""); got != http.StatusUnprocessableEntity {
		t.Errorf("an output outside the enumeration: %d, want 422", got)
	}
	if got, _ := w.tasks.Get(context.Background(), humantask.System(), task.ID); got.State.Final() {
		t.Errorf("an invalid output ended the task (%s)", got.State)
	}
}

func between(s, a, b string) string {
	_, rest, _ := strings.Cut(s, a)
	v, _, _ := strings.Cut(rest, b)
	return v
}

// TestInboxInChromium: a manager signs in, opens the task, claims it
// and completes it through the form generated from its output schema;
// the waiting process instance continues with the output.
func TestInboxInChromium(t *testing.T) {
	path := ""
	for _, name := range []string{os.Getenv("ORCHD_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); name != "" && err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("ORCHD_REQUIRE_BROWSER") == "1" {
			t.Fatal("no chromium and ORCHD_REQUIRE_BROWSER=1")
		}
		t.Skip("needs a headless chromium")
	}
	w := newWorld(t)
	task := w.submit(t, "c1", "99.90")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1200, 900))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, stop := context.WithTimeout(ctx, 60*time.Second)
	defer stop()
	base := w.url + "/console/inbox/"
	var state string
	text := func(sel string) string {
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return v
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	do("signing in", chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS("#login-user")),
		chromedp.SendKeys(chromedp.CSS("#login-user"), "mary"),
		chromedp.SendKeys(chromedp.CSS("#login-password"), maryPassword),
		chromedp.Click(chromedp.CSS("#login-submit")),
		chromedp.WaitVisible(chromedp.CSS("#tasks")))
	user := text("#user")
	do("opening the task", chromedp.Click(chromedp.CSS(`a.task[href$="`+task.ID+`"]`)), chromedp.WaitVisible(chromedp.CSS("#op-claim")))
	input := text("#input")
	do("claiming", chromedp.Click(chromedp.CSS("#op-claim")), chromedp.WaitVisible(chromedp.CSS("#output-form")))
	do("completing",
		chromedp.SetValue(chromedp.CSS(`select[name="f.decision.verdict"]`), "approved"),
		chromedp.SendKeys(chromedp.CSS(`input[name="f.decision.comment"]`), `<b>ok</b> & fine`),
		chromedp.Click(chromedp.CSS("#op-complete")))
	// #msg already shows "Claimed.": wait for the completion's page (a
	// read during the navigation fails; try again).
	msg := ""
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("#msg")||{}).textContent||""`))
		if err == nil && v != "" && v != "Claimed." {
			msg = v
			break
		}
	}
	if user != "mary" || !strings.Contains(input, "99.90") || msg != "Completed." {
		t.Errorf("user %q, input %q, message %q", user, input, msg)
	}
	got, err := w.tasks.Get(context.Background(), humantask.System(), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	state = string(got.State)
	if state != string(humantask.Completed) || !strings.Contains(got.Output, "&lt;b&gt;ok&lt;/b&gt; &amp; fine") {
		t.Errorf("task %s with output %s, want COMPLETED with the comment as text", state, got.Output)
	}
	if b := w.soap(t, "status", `<tns:req><tns:id>c1</tns:id></tns:req>`); !strings.Contains(b, ">done:approved<") {
		t.Errorf("the process after the task: %s, want done:approved", b)
	}
}
