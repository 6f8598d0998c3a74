package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/orchd/orchd/internal/mgmt"
)

// The console tests drive the web console of a real orchd in headless
// Chromium (Debian's chromium package; ORCHD_CHROMIUM names another
// binary). Without a browser they skip, unless ORCHD_REQUIRE_BROWSER=1
// (as .ci/run sets) makes that a failure. Each page is saved as a PNG in
// $ORCHD_ARTIFACTS (default artifacts/console at the repository root).

// consoleToken is adminToken, which apiGet sends (every read of a server
// with a token needs one).
const consoleToken = adminToken

// consoleReadToken is the read token of consoleServer: what an operator
// who only looks gives the console (with a token configured, every read
// needs one).
const consoleReadToken = "console-e2e-read-token"

// betaID is the correlation value of beta's instance, as XML text: its
// value is "beta-<b>1</b>".
const betaID = "beta-&lt;b&gt;1&lt;/b&gt;"

// findChromium returns the browser to drive, or "" when there is none.
func findChromium() string {
	if p := os.Getenv("ORCHD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactsDir is where the screenshots go.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ORCHD_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "artifacts", "console")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one headless Chromium tab.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string
	// exceptions are the page's uncaught script errors.
	mu         sync.Mutex
	exceptions []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := findChromium()
	if path == "" {
		if os.Getenv("ORCHD_REQUIRE_BROWSER") == "1" {
			t.Fatal("no chromium found and ORCHD_REQUIRE_BROWSER=1: install Debian's chromium package (apt-get install chromium) or set ORCHD_CHROMIUM")
		}
		t.Skip("the console tests need a headless browser: install Debian's chromium package (apt-get install chromium) or set ORCHD_CHROMIUM")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root in CI containers
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("lang", "en-US"),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		acancel()
	})
	b := &browser{t: t, ctx: ctx, dir: artifactsDir(t)}
	// Start the browser (without a deadline: that would bound its life).
	start, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-start.Done():
		case <-time.After(60 * time.Second):
			cancel() // a browser that does not start fails the test below
		}
	}()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			b.mu.Lock()
			defer b.mu.Unlock()
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			b.exceptions = append(b.exceptions, msg)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// do runs steps within 45 s; on failure it saves a screenshot and fails
// the test with what the page shows.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(what, err)
	}
}

func (b *browser) fail(what string, err error) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if png, e := chromedp.Run(ctx, chromedp.CaptureScreenshot()); e == nil {
		_ = os.WriteFile(filepath.Join(b.dir, "failed-"+sanitize(b.t.Name())+".png"), png, 0o644)
	}
	b.t.Fatalf("%s: %v\nat %s; script errors: %v\npage:\n%s", what, err, loc, b.errors(), text)
}

func sanitize(s string) string {
	return regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(s, "-")
}

// wait polls a script expression until it is true.
func (b *browser) wait(what, expr string) {
	b.t.Helper()
	b.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(30*time.Second))(ctx, t)
		return err
	}))
}

// eval returns a script expression's value.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.fail("evaluating "+expr, err)
	}
	return v
}

// open navigates to u and waits for the page's shell.
func (b *browser) open(u string) {
	b.t.Helper()
	b.do("opening "+u, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("main#main")))
}

// confirmClick clicks a button whose action asks first, and confirms.
func (b *browser) confirmClick(button string) {
	b.t.Helper()
	b.do("clicking "+button, chromedp.Click(chromedp.CSS(button)))
	b.wait("asked to confirm", `document.querySelector('#confirm').open`)
	b.do("confirming", chromedp.Click(chromedp.CSS("#confirm-yes")))
}

// acted clicks an instance's action button, confirms, waits for the
// result, and returns the instance as the API describes it then.
func (b *browser) acted(admin, id, action string) mgmt.InstanceDetail {
	b.t.Helper()
	b.confirmClick("#act-" + action)
	b.wait("result shown", `document.querySelector('#action-result').textContent.includes('done')`)
	var d mgmt.InstanceDetail
	apiGet(b.t, admin, "instances/"+url.PathEscape(id), &d)
	return d
}

// shot saves the viewport as name.png among the artifacts.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.fail("screenshot "+name, err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.exceptions...)
}

// noScriptErrors fails the test when a page threw.
func (b *browser) noScriptErrors() {
	b.t.Helper()
	if errs := b.errors(); len(errs) > 0 {
		b.t.Errorf("the console's script threw: %v", errs)
	}
}

// apiGet decodes GET base/api/v1/path into v.
func apiGet(t *testing.T, base, path string, v any) {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The tests' admin token; a server without one reads without it.
	req.Header.Set("Authorization", "Bearer "+consoleToken)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

var adminRE = regexp.MustCompile(`msg="management API" addr=(\S+)`)

// failingBody calls a partner that refuses connections, with no failure
// policy: a persistent instance is suspended on the failed invoke.
const failingBody = `<sequence>
  <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
    <correlations><correlation set="cs" initiate="yes"/></correlations>
  </receive>
  <invoke name="callPartner" partnerLink="partner" operation="call" inputVariable="in" outputVariable="p1"/>
  ` + initOut + `
  <reply partnerLink="client" operation="run" variable="out"/>
</sequence>`

// consoleServer starts orchd with three persistent processes: alpha and
// beta, whose instances wait for a second message, and gamma, whose
// instances are suspended on a failed invoke; the API and console on
// their own listener, a token and a timeline. It returns orchd, the
// console's base URL and the deploy directory.
func consoleServer(t *testing.T) (o *orchd, admin, deploy string) {
	t.Helper()
	deploy, data := t.TempDir(), t.TempDir()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(consoleToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	readTokenFile := filepath.Join(t.TempDir(), "read-token")
	if err := os.WriteFile(readTokenFile, []byte(consoleReadToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeVersion(t, deploy, "alpha", "A", false)
	writeVersion(t, deploy, "beta", "B", false)
	writeProcess(t, deploy, "gamma", "127.0.0.1:1", failingBody, false)
	o = startOrchd(t, "--deploy", deploy, "--data", data, "--deploy-poll", hotPoll,
		"--admin-listen", "127.0.0.1:0", "--admin-token-file", tokenFile, "--admin-read-token-file", readTokenFile,
		"--timeline", "100", "--sample-every", "1")
	m := adminRE.FindStringSubmatch(o.log())
	if m == nil {
		t.Fatalf("no management API address in the log\n%s", o.log())
	}
	return o, "http://" + m[1], deploy
}

// TestConsoleInBrowser renders each page of the console in Chromium and
// uses it: a filter narrows the instance list, the terminate button
// terminates, a broken bundle's error shows.
func TestConsoleInBrowser(t *testing.T) {
	b := newBrowser(t)
	o, admin, deploy := consoleServer(t)
	for _, id := range []string{"alpha-1", "alpha-2"} {
		if got := answer(t, o.base, "alpha", id, "1"); got != "A-started-"+id {
			t.Fatalf("alpha %s: %q", id, got)
		}
	}
	// beta's id holds markup, which the console must show as text.
	if got := answer(t, o.base, "beta", betaID, "1"); got != "B-started-"+betaID {
		t.Fatalf("beta: %q", got)
	}
	if r := callRun(t, o.base, "gamma", "gamma-1", "1"); r.status == http.StatusOK {
		t.Fatalf("gamma answered though its partner refuses: %s", r.body)
	}
	var procs []mgmt.Process
	apiGet(t, admin, "processes", &procs)
	names, versions := map[string]string{}, map[string]int{}
	for _, p := range procs {
		names[p.Local], versions[p.Local] = p.Name, p.Version
	}
	if names["alpha"] == "" || names["beta"] == "" {
		t.Fatalf("processes: %+v", procs)
	}

	t.Run("processes", func(t *testing.T) {
		b.t = t
		b.open(admin + "/console/")
		// Every read needs a token: the operator gives the read token.
		b.do("giving the read token", chromedp.SendKeys(chromedp.CSS("#token"), consoleReadToken), chromedp.Click(chromedp.CSS("#token-save")))
		b.wait("the processes listed", `document.querySelectorAll('#processes-table tbody tr').length === 3`)
		b.wait("throughput measured", `[...document.querySelectorAll('#processes-table td.tps')].every(td => /^[0-9.]+$/.test(td.textContent))`)
		row := fmt.Sprintf(`document.querySelector('#processes-table tr[data-process=%q]')`, names["alpha"])
		if got := eval[string](b, row+`.innerText`); !strings.Contains(got, "/processes/alpha") || !strings.Contains(got, "active") {
			t.Errorf("alpha's row: %q", got)
		}
		// The endpoint links to its WSDL on the SOAP listener.
		href := eval[string](b, row+`.querySelector('a[href$="?wsdl"]').href`)
		if href != o.base+"/processes/alpha?wsdl" {
			t.Errorf("WSDL link %q, want %s/processes/alpha?wsdl", href, o.base)
		}
		b.shot("processes")
		b.noScriptErrors()
	})

	t.Run("process outline", func(t *testing.T) {
		b.t = t
		b.open(admin + "/console/process?" + url.Values{"name": {names["alpha"]}}.Encode())
		b.wait("outline drawn", `document.querySelectorAll('#outline-tree .row[data-kind="receive"]').length === 2`)
		b.wait("versions listed", fmt.Sprintf(`document.querySelector('#versions-table tr[data-version="%d"]') !== null`, versions["alpha"]))
		// Sampling every instance (--sample-every 1), the replies were timed.
		b.wait("activities timed", `[...document.querySelectorAll('#outline-tree .row[data-kind="reply"] .count')].some(c => c.textContent !== '0')`)
		if got := eval[string](b, `document.querySelector('#outline-tree .row').innerText`); !strings.Contains(got, "process") || !strings.Contains(got, "alpha") {
			t.Errorf("the outline's root is %q, want process alpha", got)
		}
		if got := eval[int](b, `document.querySelectorAll('#outline-tree .row[data-kind="reply"] .bar').length`); got != 2 {
			t.Errorf("%d replies with a time bar, want 2", got)
		}
		if got := eval[bool](b, fmt.Sprintf(`document.querySelector('#retire-v%d').disabled`, versions["alpha"])); !got {
			t.Errorf("retire is enabled with the read token")
		}
		checkVersionDiagram(b, admin, names["alpha"])
		b.shot("process")
		b.noScriptErrors()
	})

	t.Run("filter narrows the instances", func(t *testing.T) {
		b.t = t
		b.open(admin + "/console/instances")
		rows := `document.querySelectorAll('#instances-table tbody tr')`
		b.wait("all four instances listed", rows+`.length === 4`)
		b.shot("instances")
		b.wait("process choices", fmt.Sprintf(`[...document.querySelectorAll('#f-process option')].some(o => o.value === %q)`, names["alpha"]))
		b.do("filtering by process", chromedp.SetValue(chromedp.CSS("#f-process"), names["alpha"]), chromedp.Click(chromedp.CSS("#f-apply")))
		b.wait("only alpha's", fmt.Sprintf(`%s.length === 2 && [...%s].every(r => r.dataset.process === %q)`, rows, rows, names["alpha"]))
		if loc := eval[string](b, `location.search`); !strings.Contains(loc, "process=") {
			t.Errorf("the filter is not in the address: %q", loc)
		}
		// One a page: the cursor leads to the other.
		b.do("one a page", chromedp.SetValue(chromedp.CSS("#f-limit"), "1"), chromedp.Click(chromedp.CSS("#f-apply")))
		b.wait("first page", rows+`.length === 1 && !document.querySelector('#page-next').disabled`)
		first := eval[string](b, rows+`[0].dataset.instanceId`)
		b.do("next page", chromedp.Click(chromedp.CSS("#page-next")))
		b.wait("second page", fmt.Sprintf(`%s.length === 1 && %s[0].dataset.instanceId !== %q && document.querySelector('#page-number').textContent === 'page 2'`, rows, rows, first))
		b.do("back to all", chromedp.SetValue(chromedp.CSS("#f-limit"), ""))
		b.do("filtering by correlation", chromedp.SetValue(chromedp.CSS("#f-correlation"), "alpha-2"), chromedp.Click(chromedp.CSS("#f-apply")))
		b.wait("only alpha-2", rows+`.length === 1 && `+rows+`[0].innerText.includes('alpha-2')`)
		b.noScriptErrors()
	})

	t.Run("terminate from the instance page", func(t *testing.T) {
		b.t = t
		var page mgmt.Page
		apiGet(t, admin, "instances?process=beta", &page)
		if len(page.Instances) != 1 {
			t.Fatalf("beta's instances: %+v", page)
		}
		id := page.Instances[0].ID
		b.open(admin + "/console/instance?" + url.Values{"id": {id}}.Encode())
		b.wait("state shown", `document.querySelector('#instance-state-badge') !== null`)
		b.wait("variables shown", `document.querySelector('#variables details[data-variable="in"] pre.xml .x-tag') !== null`)
		if got := eval[string](b, `document.querySelector('#correlations-table tbody').innerText`); !strings.Contains(got, "beta-<b>1</b>") {
			t.Errorf("correlation values: %q", got)
		}
		// Markup in a value is text, never HTML.
		if got := eval[string](b, `document.querySelector('#variables details[data-variable="in"] pre').textContent`); !strings.Contains(got, "beta-<b>1</b>") {
			t.Errorf("variable in: %q", got)
		}
		if eval[bool](b, `document.querySelector('main b') !== null`) {
			t.Errorf("a value's markup became a <b> element")
		}
		b.wait("timeline shown", `document.querySelector('#timeline-table tbody tr[data-kind="instanceCreated"]') !== null`)
		checkInstanceDiagram(b, admin, id, mgmt.ActivityWaiting, "waits for")
		b.wait("terminate offered", `!document.querySelector('#act-terminate').hidden`)
		if !eval[bool](b, `document.querySelector('#act-terminate').disabled`) {
			t.Errorf("terminate is enabled with the read token")
		}
		b.do("giving the token", chromedp.SendKeys(chromedp.CSS("#token"), consoleToken), chromedp.Click(chromedp.CSS("#token-save")))
		b.wait("terminate enabled", `!document.querySelector('#act-terminate').disabled`)
		b.shot("instance")
		if d := b.acted(admin, id, "terminate"); d.State != mgmt.StateTerminated {
			t.Fatalf("after terminate the API says %q", d.State)
		}
		b.wait("page shows terminated", `document.querySelector('#instance-state-badge').dataset.state === 'terminated'`)
		b.wait("the termination in the timeline", `document.querySelector('#timeline-table tbody tr[data-kind="instanceTerminated"]') !== null`)
		b.noScriptErrors()
	})

	t.Run("cancel a failed invoke", func(t *testing.T) {
		b.t = t
		var page mgmt.Page
		if !eventually(func() bool {
			apiGet(t, admin, "instances?process=gamma&state=suspended", &page)
			return len(page.Instances) == 1
		}) {
			t.Fatalf("gamma's instance is not suspended: %+v\n%s", page, o.log())
		}
		id := page.Instances[0].ID
		b.open(admin + "/console/instance?" + url.Values{"id": {id}}.Encode())
		b.wait("the failure shown", `!document.querySelector('#failure-section').hidden && document.querySelector('#failure').innerText.includes('callPartner')`)
		b.wait("recovery actions offered", `['retry', 'fault', 'cancel'].every(a => !document.querySelector('#act-' + a).hidden)`)
		failed := checkInstanceDiagram(b, admin, id, mgmt.ActivityFailed, "callPartner")
		if stroke := eval[string](b, fmt.Sprintf(`document.querySelector('#diagram g[data-activity="%d"] > rect').getAttribute('stroke')`, failed)); stroke != "#cf222e" {
			t.Errorf("the failed invoke's outline is %q, want red", stroke)
		}
		shotDiagram(b, "instance-failed-diagram")
		b.shot("instance-failed")
		d := b.acted(admin, id, "cancel")
		if d.State == mgmt.StateSuspended || d.Failure != nil {
			t.Fatalf("after cancel the API says %q, failure %+v", d.State, d.Failure)
		}
		b.wait("page shows the new state", fmt.Sprintf(`document.querySelector('#instance-state-badge').dataset.state === %q && document.querySelector('#failure-section').hidden`, d.State))
		b.noScriptErrors()
	})

	t.Run("deploy error shown", func(t *testing.T) {
		b.t = t
		writeProcess(t, deploy, "broken", "127.0.0.1:1", `<sequence><receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
<bogus/></sequence>`, true)
		b.open(admin + "/console/")
		box := `document.querySelector('#deploy-errors:not([hidden]) [data-bundle="broken"]')`
		b.wait("the broken bundle's error box", box+` !== null && `+box+`.innerText.includes('bogus')`)
		if got := eval[string](b, box+`.innerText`); !strings.Contains(got, "broken.bpel:") {
			t.Errorf("the error does not name the file and line: %q", got)
		}
		b.shot("bundles")
		b.noScriptErrors()
	})

	t.Run("retire and activate a version", func(t *testing.T) {
		b.t = t
		v := versions["alpha"]
		state := func() string {
			var p mgmt.Process
			apiGet(t, admin, fmt.Sprintf("processes/alpha?version=%d", v), &p)
			return p.State
		}
		b.open(admin + "/console/process?" + url.Values{"name": {names["alpha"]}}.Encode())
		// The token given on the instance page is still the tab's.
		b.wait("retire enabled", fmt.Sprintf(`(b => b && !b.disabled)(document.querySelector('#retire-v%d'))`, v))
		b.confirmClick(fmt.Sprintf("#retire-v%d", v))
		b.wait("retired", fmt.Sprintf(`document.querySelector('#activate-v%d') !== null`, v))
		if got := state(); got != "retired" {
			t.Fatalf("after retire the API says %q", got)
		}
		b.do("activating", chromedp.Click(chromedp.CSS(fmt.Sprintf("#activate-v%d", v))))
		b.wait("active again", fmt.Sprintf(`document.querySelector('#retire-v%d') !== null`, v))
		if got := state(); got != "active" {
			t.Fatalf("after activate the API says %q", got)
		}
		b.noScriptErrors()
	})
}

// TestConsoleReadOnlyWithoutTimeline: without --admin-listen the console
// is served beside the SOAP endpoints; without --admin-token-file its
// buttons say the API is read-only, and without --timeline an instance
// page says how to see its events, while the pages poll.
func TestConsoleReadOnlyWithoutTimeline(t *testing.T) {
	b := newBrowser(t)
	deploy := t.TempDir()
	writeVersion(t, deploy, "alpha", "A", false)
	o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	if got := answer(t, o.base, "alpha", "ro-1", "1"); got != "A-started-ro-1" {
		t.Fatalf("alpha: %q", got)
	}
	var page mgmt.Page
	apiGet(t, o.base, "instances", &page)
	if len(page.Instances) != 1 {
		t.Fatalf("instances: %+v", page)
	}
	b.open(o.base + "/console/instance?" + url.Values{"id": {page.Instances[0].ID}}.Encode())
	b.wait("the timeline note", `!document.querySelector('#timeline-note').hidden`)
	if got := eval[string](b, `document.querySelector('#timeline-note').innerText`); !strings.Contains(got, "--timeline N") {
		t.Errorf("timeline note: %q", got)
	}
	b.wait("read-only said", `(p => !p.hidden && p.innerText.includes('read-only'))(document.querySelector('#actions-section .readonly-note'))`)
	if !eval[bool](b, `[...document.querySelectorAll('#actions button[data-action]:not([hidden])')].every(x => x.disabled)`) {
		t.Errorf("an action button is enabled on a read-only API")
	}
	b.shot("instance-readonly")
	b.open(o.base + "/console/")
	b.wait("polling", `document.querySelector('#live-state').textContent.includes('polling') && document.querySelectorAll('#processes-table tbody tr').length === 1`)
	b.noScriptErrors()
}
