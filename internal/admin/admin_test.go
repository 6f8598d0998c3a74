package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/buildinfo"
	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
)

// These tests check the HTTP mapping only: routing, parameters, statuses,
// auth and limits, over a small in-test Backend that records its calls.
// The real Backend is exercised end to end in cmd/orchd.

const token = "s3cret-token"

// fakeBackend records the calls it gets and answers err when set.
type fakeBackend struct {
	mu    sync.Mutex
	calls []string
	err   error
	// instances are listed in this order, pageSize at a time at most.
	instances []mgmt.Instance
	pageSize  int
	queries   []mgmt.Query
	// actErr answers Act for these ids.
	actErr map[string]error
	// deployed is the body Deploy got.
	deployed []byte
}

func (f *fakeBackend) record(format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	return f.err
}

func (f *fakeBackend) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeBackend) Processes(context.Context) ([]mgmt.Process, error) {
	if err := f.record("Processes"); err != nil {
		return nil, err
	}
	return []mgmt.Process{{Name: "{urn:x}P", Local: "P", Version: 1, State: "active"}}, nil
}

func (f *fakeBackend) Process(_ context.Context, name string, version int) (*mgmt.Process, error) {
	if err := f.record("Process %s %d", name, version); err != nil {
		return nil, err
	}
	return &mgmt.Process{Name: name, Version: max(version, 1)}, nil
}

func (f *fakeBackend) SetActive(_ context.Context, name string, version int, active bool) error {
	return f.record("SetActive %s %d %v", name, version, active)
}

func (f *fakeBackend) Bundles(context.Context) ([]mgmt.Bundle, error) {
	return nil, f.record("Bundles")
}

func (f *fakeBackend) Deploy(_ context.Context, name string, zip []byte) (*mgmt.Bundle, error) {
	f.mu.Lock()
	f.deployed = zip
	f.mu.Unlock()
	err := f.record("Deploy %s %d", name, len(zip))
	if err != nil {
		return &mgmt.Bundle{Name: name, State: "failed", Errors: []string{"x.bpel:3: receive: no such operation"}}, err
	}
	return &mgmt.Bundle{Name: name, State: "deployed", Version: 1}, nil
}

func (f *fakeBackend) Undeploy(_ context.Context, name string) error {
	return f.record("Undeploy %s", name)
}

// Instances pages through f.instances by index cursors.
func (f *fakeBackend) Instances(_ context.Context, q mgmt.Query) (*mgmt.Page, error) {
	if err := f.record("Instances"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	start := 0
	if q.After != "" {
		fmt.Sscan(q.After, &start)
	}
	n := q.Limit
	if f.pageSize > 0 && n > f.pageSize {
		n = f.pageSize
	}
	end := min(start+n, len(f.instances))
	p := &mgmt.Page{Instances: f.instances[start:end], Scanned: end - start}
	if end < len(f.instances) {
		p.Next = fmt.Sprint(end)
	}
	return p, nil
}

func (f *fakeBackend) Instance(_ context.Context, id string) (*mgmt.InstanceDetail, error) {
	if err := f.record("Instance %s", id); err != nil {
		return nil, err
	}
	if id == "gone" {
		return nil, fmt.Errorf("instance %s: %w", id, mgmt.ErrNotFound)
	}
	return &mgmt.InstanceDetail{Instance: mgmt.Instance{ID: id, State: mgmt.StateSuspended}}, nil
}

func (f *fakeBackend) Act(_ context.Context, id string, a mgmt.Action) error {
	if err := f.record("Act %s %s", id, a); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.actErr[id]
}

func newServer(t *testing.T, opts Options) (*httptest.Server, *fakeBackend) {
	t.Helper()
	fb := &fakeBackend{}
	if opts.Backend == nil {
		opts.Backend = fb
	}
	srv := httptest.NewServer(New(opts))
	t.Cleanup(srv.Close)
	return srv, fb
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) errorText(t *testing.T) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &e); err != nil {
		t.Fatalf("error body is no JSON: %v\n%s", err, a.body)
	}
	return e.Error
}

func do(t *testing.T, srv *httptest.Server, method, path, auth string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func TestRoutes(t *testing.T) {
	bearer := "Bearer " + token
	tests := []struct {
		method, path string
		body         string
		status       int
		call         string // the Backend's last call, "" for none
		inBody       string // a substring of the answer
	}{
		{"GET", "/api/v1/", "", 200, "", `"readOnly": false`},
		{"GET", "/api/v1/processes", "", 200, "Processes", `"local": "P"`},
		{"GET", "/api/v1/processes/PurchaseOrder", "", 200, "Process PurchaseOrder 0", ""},
		{"GET", "/api/v1/processes/PurchaseOrder?version=3", "", 200, "Process PurchaseOrder 3", `"version": 3`},
		{"GET", "/api/v1/processes/" + url.PathEscape("{urn:a/b}P"), "", 200, "Process {urn:a/b}P 0", ""},
		{"GET", "/api/v1/processes/P?version=x", "", 400, "", "version"},
		{"GET", "/api/v1/processes/P?versoin=2", "", 400, "", "versoin"},
		{"POST", "/api/v1/processes/P/versions/2/retire", "", 200, "SetActive P 2 false", `"retired"`},
		{"POST", "/api/v1/processes/P/versions/2/activate", "", 200, "SetActive P 2 true", `"active"`},
		{"POST", "/api/v1/processes/P/versions/two/retire", "", 400, "", "version"},
		{"POST", "/api/v1/processes/P/versions/2/promote", "", 404, "", "retire or activate"},
		{"GET", "/api/v1/bundles", "", 200, "Bundles", "[]"},
		{"PUT", "/api/v1/bundles/b1", "PK..zip", 201, "Deploy b1 7", `"deployed"`},
		{"PUT", "/api/v1/bundles/b1", "", 400, "", "empty"},
		{"PUT", "/api/v1/bundles/a%5Cb", "x", 400, "", "folder name"},
		{"PUT", "/api/v1/bundles/%2E%2E", "x", 400, "", "folder name"},
		{"DELETE", "/api/v1/bundles/b1", "", 200, "Undeploy b1", `"undeployed"`},
		{"GET", "/api/v1/instances", "", 200, "Instances", `"instances": []`},
		{"GET", "/api/v1/instances/i-1", "", 200, "Instance i-1", `"id": "i-1"`},
		{"POST", "/api/v1/instances/i-1/suspend", "", 200, "Instance i-1", `"state": "suspended"`},
		{"POST", "/api/v1/instances/gone/delete", "", 200, "Instance gone", `"state": "deleted"`},
		{"POST", "/api/v1/instances/i-1/explode", "", 404, "", "unknown action"},
		{"POST", "/api/v1/instances/bulk/terminate?state=waiting", "", 200, "Instances", `"action": "terminate"`},
		{"POST", "/api/v1/instances/bulk/explode", "", 404, "", "unknown action"},
		{"GET", "/api/v1/nothing", "", 404, "", "no such route"},
		{"GET", "/metrics", "", 404, "", "no such route"},
		{"DELETE", "/api/v1/processes", "", 405, "", "allowed: GET"},
		{"POST", "/api/v1/instances/i-1", "", 405, "", "allowed: GET"},
		{"GET", "/api/v1/events", "", 503, "", "--timeline N"},
		// A Backend without a cluster is one node, itself.
		{"GET", "/api/v1/cluster", "", 200, "", `"self": true`},
		{"GET", "/api/v1/cluster?scope=all", "", 400, "", "scope"},
		{"GET", "/api/v1/processes?scope=local", "", 200, "Processes", `"local": "P"`},
		{"GET", "/api/v1/processes?scope=nodes", "", 400, "", "scope"},
		{"GET", "/api/v1/instances?scope=local", "", 200, "Instances", `"instances": []`},
		{"GET", "/api/v1/instances?scope=x", "", 400, "", "scope"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			srv, fb := newServer(t, Options{Token: token})
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			a := do(t, srv, tc.method, tc.path, bearer, body)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d\n%s", a.status, tc.status, a.body)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if got := fb.lastCall(); got != tc.call {
				t.Errorf("backend call %q, want %q", got, tc.call)
			}
			if !strings.Contains(a.body, tc.inBody) {
				t.Errorf("answer does not contain %q:\n%s", tc.inBody, a.body)
			}
			if a.status >= 400 && a.errorText(t) == "" {
				t.Errorf("error answer without an error: %s", a.body)
			}
		})
	}
}

func TestParseQuery(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		query   string
		bulk    bool
		want    mgmt.Query
		wantErr string // a substring naming the bad parameter
	}{
		{query: "", want: mgmt.Query{Limit: DefaultLimit}},
		{query: "process=PO&version=2&state=waiting&limit=10&after=abc",
			want: mgmt.Query{Process: "PO", Version: 2, State: "waiting", Limit: 10, After: "abc"}},
		{query: "startedAfter=2026-01-02T15:04:05Z&activeBefore=2026-01-02T16:04:05%2B01:00",
			want: mgmt.Query{StartedAfter: at, ActiveBefore: at, Limit: DefaultLimit}},
		{query: "correlation=R-1&correlationSet=request", want: mgmt.Query{Correlation: "R-1", CorrelationSet: "request", Limit: DefaultLimit}},
		{query: "state=waiting&max=5", bulk: true, want: mgmt.Query{State: "waiting"}},
		{query: "limit=1000", want: mgmt.Query{Limit: 1000}},
		{query: "limit=1001", wantErr: "limit 1001: at most 1000"},
		{query: "limit=0", wantErr: "limit 0: want at least 1"},
		{query: "limit=ten", wantErr: `limit "ten": want an integer`},
		{query: "version=-1", wantErr: "version -1"},
		{query: "state=sleeping", wantErr: `state "sleeping": want one of`},
		{query: "startedAfter=yesterday", wantErr: `startedAfter "yesterday": want an RFC 3339 time`},
		{query: "activeAfter=2026-01-02", wantErr: "activeAfter"},
		{query: "correlationSet=request", wantErr: "correlationSet"},
		{query: "proces=PO", wantErr: "unknown parameter proces"},
		{query: "state=waiting&state=suspended", wantErr: "state: given 2 times"},
		{query: "max=5", wantErr: "unknown parameter max"},
		{query: "limit=5", bulk: true, wantErr: "unknown parameter limit"},
		{query: "scope=local&after=m3%40node-b", want: mgmt.Query{Scope: mgmt.ScopeLocal, After: "m3@node-b", Limit: DefaultLimit}},
		{query: "scope=cluster", wantErr: `scope "cluster"`},
		{query: "scope=local", bulk: true, wantErr: "unknown parameter scope"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			v, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			q, err := ParseQuery(v, tc.bulk)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !queryEqual(q, tc.want) {
				t.Fatalf("query %+v, want %+v", q, tc.want)
			}
			// What Values writes, ParseQuery reads back.
			back, err := ParseQuery(Values(q), false)
			if err != nil {
				t.Fatalf("Values(%+v) does not parse: %v", q, err)
			}
			if tc.bulk {
				back.Limit = 0
			}
			if !queryEqual(back, q) {
				t.Fatalf("round trip %+v, want %+v", back, q)
			}
		})
	}
}

func queryEqual(a, b mgmt.Query) bool {
	ta := []time.Time{a.StartedAfter, a.StartedBefore, a.ActiveAfter, a.ActiveBefore}
	tb := []time.Time{b.StartedAfter, b.StartedBefore, b.ActiveAfter, b.ActiveBefore}
	for i := range ta {
		if !ta[i].Equal(tb[i]) {
			return false
		}
	}
	a.StartedAfter, a.StartedBefore, a.ActiveAfter, a.ActiveBefore = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	b.StartedAfter, b.StartedBefore, b.ActiveAfter, b.ActiveBefore = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

func TestAuth(t *testing.T) {
	const readTok = "r3ad-only"
	tests := []struct {
		name      string
		access    Access // configured
		method    string
		auth      string // sent
		host      string // sent; empty: the test server's
		status    int
		reason    string
		challenge bool
	}{
		{"read-only refuses a mutation", Access{}, "POST", "Bearer anything", "", 403, ReadOnlyReason, false},
		{"read-only refuses a delete", Access{}, "DELETE", "", "", 403, "--admin-token-file", false},
		{"read-only reads", Access{}, "GET", "", "", 200, "", false},
		{"no token sent", Access{Token: token}, "POST", "", "", 401, "needs a token", true},
		{"wrong token", Access{Token: token}, "POST", "Bearer " + token + "x", "", 401, "wrong token", true},
		{"a token's prefix", Access{Token: token}, "POST", "Bearer s3cret", "", 401, "wrong token", true},
		{"not bearer", Access{Token: token}, "POST", "Basic " + token, "", 401, "Bearer <token>", true},
		{"right token", Access{Token: token}, "POST", "Bearer " + token, "", 200, "", false},
		{"scheme in any case", Access{Token: token}, "POST", "bearer " + token, "", 200, "", false},
		{"reads need the token", Access{Token: token}, "GET", "", "", 401, "needs a token", true},
		{"reads refuse a wrong one", Access{Token: token}, "GET", "Bearer nope", "", 401, "wrong token", true},
		{"reads with the token", Access{Token: token}, "GET", "Bearer " + token, "", 200, "", false},
		{"the read token reads", Access{Token: token, ReadToken: readTok}, "GET", "Bearer " + readTok, "", 200, "", false},
		{"the read token mutates nothing", Access{Token: token, ReadToken: readTok}, "POST", "Bearer " + readTok, "", 403, "only reads", false},
		{"a read token alone", Access{ReadToken: readTok}, "GET", "", "", 401, "needs a token", true},
		{"off", Access{Off: OffReason}, "GET", "", "", 403, "--admin-token-file", false},
		{"a Host it answers", Access{Hosts: []string{"127.0.0.1", "orchd.internal"}}, "GET", "", "orchd.internal:8080", 200, "", false},
		{"a rebound Host", Access{Hosts: []string{"127.0.0.1"}}, "GET", "", "evil.example:8080", 421, "--admin-hosts", false},
		{"any IP", Access{Hosts: []string{"localhost"}, AnyIP: true}, "GET", "", "[::1]:8080", 200, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, fb := newServer(t, Options{Access: tc.access})
			path := "/api/v1/instances/i-1/resume"
			switch tc.method {
			case "GET":
				path = "/api/v1/instances/i-1"
			case "DELETE":
				path = "/api/v1/bundles/b"
			}
			req := httptest.NewRequest(tc.method, path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.host != "" {
				req.Host = tc.host
			} else {
				req.Host = "127.0.0.1:8080"
			}
			rec := httptest.NewRecorder()
			srv.Config.Handler.ServeHTTP(rec, req)
			a := answer{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.body)
			}
			if tc.reason != "" && !strings.Contains(a.errorText(t), tc.reason) {
				t.Errorf("reason %q, want one containing %q", a.errorText(t), tc.reason)
			}
			if got := a.header.Get("WWW-Authenticate"); tc.challenge != strings.HasPrefix(got, "Bearer") {
				t.Errorf("WWW-Authenticate %q", got)
			}
			if tc.status >= 400 && fb.lastCall() != "" {
				t.Errorf("a refused request reached the backend: %s", fb.lastCall())
			}
		})
	}
	t.Run("info says read-only", func(t *testing.T) {
		srv, _ := newServer(t, Options{Build: buildinfo.Info{Version: "v9", Revision: "abc", GoVersion: "go1"}})
		a := do(t, srv, "GET", "/api/v1/", "", nil)
		var info struct {
			ReadOnly  bool `json:"readOnly"`
			Version   string
			Revision  string
			GoVersion string `json:"goVersion"`
		}
		if err := json.Unmarshal([]byte(a.body), &info); err != nil || !info.ReadOnly || info.Version != "v9" || info.Revision != "abc" || info.GoVersion != "go1" {
			t.Fatalf("info %+v (%v): %s", info, err, a.body)
		}
	})
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		err    error
		status int
	}{
		{fmt.Errorf("instance x: %w", mgmt.ErrNotFound), 404},
		{fmt.Errorf("resume: not suspended: %w", mgmt.ErrConflict), 409},
		{fmt.Errorf("bad: %w", mgmt.ErrInvalid), 400},
		{fmt.Errorf("no store: %w", mgmt.ErrUnavailable), 503},
		{fmt.Errorf("disk on fire"), 500},
	}
	for _, tc := range tests {
		t.Run(tc.err.Error(), func(t *testing.T) {
			srv, fb := newServer(t, Options{Token: token})
			fb.err = tc.err
			for _, r := range []struct{ method, path string }{
				{"GET", "/api/v1/processes"},
				{"GET", "/api/v1/instances/x"},
				{"POST", "/api/v1/instances/x/resume"},
				{"POST", "/api/v1/processes/P/versions/1/retire"},
			} {
				a := do(t, srv, r.method, r.path, "Bearer "+token, nil)
				if a.status != tc.status || a.errorText(t) != tc.err.Error() {
					t.Errorf("%s %s: %d %s, want %d with the error", r.method, r.path, a.status, a.body, tc.status)
				}
			}
		})
	}
	t.Run("a bundle that fails to deploy is 422 with its errors", func(t *testing.T) {
		srv, fb := newServer(t, Options{Token: token})
		fb.err = fmt.Errorf("bundle b: %w", mgmt.ErrInvalid)
		a := do(t, srv, "PUT", "/api/v1/bundles/b", "Bearer "+token, strings.NewReader("zip"))
		var body struct {
			Error  string       `json:"error"`
			Errors []string     `json:"errors"`
			Bundle *mgmt.Bundle `json:"bundle"`
		}
		if err := json.Unmarshal([]byte(a.body), &body); err != nil {
			t.Fatal(err)
		}
		if a.status != 422 || len(body.Errors) != 1 || body.Bundle == nil || body.Bundle.State != "failed" {
			t.Fatalf("%d %s", a.status, a.body)
		}
	})
}

func TestBundleLimit(t *testing.T) {
	srv, fb := newServer(t, Options{Token: token, MaxBundle: 1000})
	if a := do(t, srv, "PUT", "/api/v1/bundles/b", "Bearer "+token, strings.NewReader(strings.Repeat("z", 1000))); a.status != 201 {
		t.Fatalf("a bundle of the limit: %d %s", a.status, a.body)
	}
	// Declared too large, and too large without a declared length.
	a := do(t, srv, "PUT", "/api/v1/bundles/b", "Bearer "+token, strings.NewReader(strings.Repeat("z", 1001)))
	if a.status != 413 || !strings.Contains(a.errorText(t), "1000") {
		t.Fatalf("declared too large: %d %s", a.status, a.body)
	}
	a = do(t, srv, "PUT", "/api/v1/bundles/b", "Bearer "+token, io.MultiReader(strings.NewReader(strings.Repeat("z", 1001))))
	if a.status != 413 {
		t.Fatalf("streamed too large: %d %s", a.status, a.body)
	}
	if got := fb.lastCall(); got != "Deploy b 1000" {
		t.Errorf("backend saw %q; an oversized bundle must not reach it", got)
	}
}

func TestBulk(t *testing.T) {
	ins := make([]mgmt.Instance, 25)
	for i := range ins {
		ins[i] = mgmt.Instance{ID: fmt.Sprintf("i-%02d", i), State: mgmt.StateWaiting}
	}
	tests := []struct {
		name      string
		query     string
		n         int // instances matching
		failing   []string
		status    int
		matched   int
		done      int
		truncated bool
		wantErr   string
	}{
		{name: "all of few", query: "state=waiting", n: 7, status: 200, matched: 7, done: 7},
		{name: "default max", query: "", n: 25, status: 200, matched: 25, done: 25},
		{name: "max cuts", query: "max=10", n: 25, status: 200, matched: 10, done: 10, truncated: true},
		{name: "max equal to the count", query: "max=25", n: 25, status: 200, matched: 25, done: 25},
		{name: "failures are reported", query: "max=5", n: 25, failing: []string{"i-01", "i-03"}, status: 200, matched: 5, done: 3, truncated: true},
		{name: "max over the cap", query: "max=10001", status: 400, wantErr: "max 10001: at most 10000"},
		{name: "max zero", query: "max=0", status: 400, wantErr: "max 0"},
		{name: "a listing parameter", query: "after=x", status: 400, wantErr: "unknown parameter after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fb := &fakeBackend{instances: ins[:tc.n], pageSize: 4, actErr: map[string]error{}}
			for _, id := range tc.failing {
				fb.actErr[id] = fmt.Errorf("instance %s: terminated already: %w", id, mgmt.ErrConflict)
			}
			srv, _ := newServer(t, Options{Backend: fb, Token: token})
			a := do(t, srv, "POST", "/api/v1/instances/bulk/terminate?"+tc.query, "Bearer "+token, nil)
			if a.status != tc.status {
				t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.body)
			}
			if tc.wantErr != "" {
				if !strings.Contains(a.errorText(t), tc.wantErr) {
					t.Fatalf("error %q, want %q", a.errorText(t), tc.wantErr)
				}
				return
			}
			var res mgmt.BulkResult
			if err := json.Unmarshal([]byte(a.body), &res); err != nil {
				t.Fatal(err)
			}
			if res.Action != mgmt.Terminate || res.Matched != tc.matched || res.Done != tc.done || res.Truncated != tc.truncated || len(res.Failed) != len(tc.failing) {
				t.Fatalf("result %+v", res)
			}
			for i, f := range res.Failed {
				if f.ID != tc.failing[i] || !strings.Contains(f.Error, "terminated already") {
					t.Errorf("failure %+v", f)
				}
			}
			// Acted on exactly the first matched instances, in order.
			var acted []string
			for _, c := range fb.calls {
				if strings.HasPrefix(c, "Act ") {
					acted = append(acted, c)
				}
			}
			if len(acted) != tc.matched {
				t.Fatalf("acted %d times, want %d: %v", len(acted), tc.matched, acted)
			}
			for i, c := range acted {
				if want := fmt.Sprintf("Act i-%02d terminate", i); c != want {
					t.Errorf("act %d: %q, want %q", i, c, want)
				}
			}
			// Every page asked no more than the API's page limit, and the
			// filter went through.
			for _, q := range fb.queries {
				if q.Limit < 1 || q.Limit > MaxLimit || (strings.Contains(tc.query, "state=waiting") && q.State != "waiting") {
					t.Errorf("page query %+v", q)
				}
			}
		})
	}
}

// fakeStream hands out one subscription and reports its end.
type fakeStream struct {
	ch        chan events.Event
	cancelled chan struct{}
	once      sync.Once
}

func (s *fakeStream) Subscribe() (<-chan events.Event, func()) {
	return s.ch, func() { s.once.Do(func() { close(s.cancelled) }) }
}

// sseReader reads server-sent events: name and data of each.
type sseReader struct{ sc *bufio.Scanner }

func (r sseReader) next(t *testing.T) (event, data string) {
	t.Helper()
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case line == "" && event != "":
			return event, data
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
	t.Fatalf("stream ended: %v", r.sc.Err())
	return "", ""
}

func TestEventStream(t *testing.T) {
	st := &fakeStream{ch: make(chan events.Event, 4), cancelled: make(chan struct{})}
	srv, _ := newServer(t, Options{Stream: st, StatsEvery: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/events", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r := sseReader{bufio.NewScanner(resp.Body)}
	if ev, data := r.next(t); ev != "stats" || !strings.Contains(data, `"local":"P"`) {
		t.Fatalf("first event %s %s, want the stats", ev, data)
	}
	st.ch <- events.Event{Kind: events.InstanceSuspended, Process: "{urn:x}P", Instance: "i-7", Detail: "invoke failed"}
	for {
		ev, data := r.next(t)
		if ev == "stats" {
			continue // the ticker's
		}
		var got struct {
			Kind, Process, Instance, Detail string
		}
		if err := json.Unmarshal([]byte(data), &got); err != nil {
			t.Fatal(err)
		}
		if ev != "instance" || got.Kind != "instanceSuspended" || got.Process != "{urn:x}P" || got.Instance != "i-7" || got.Detail != "invoke failed" {
			t.Fatalf("%s %s", ev, data)
		}
		break
	}
	// The client goes away: the subscription ends.
	cancel()
	select {
	case <-st.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription outlived its client")
	}
}

func TestEventStreamEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(st *fakeStream, done chan struct{})
	}{
		{"the stream drops the subscriber", func(st *fakeStream, _ chan struct{}) { close(st.ch) }},
		{"orchd shuts down", func(_ *fakeStream, done chan struct{}) { close(done) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeStream{ch: make(chan events.Event), cancelled: make(chan struct{})}
			done := make(chan struct{})
			srv, _ := newServer(t, Options{Stream: st, Done: done})
			resp, err := srv.Client().Get(srv.URL + "/api/v1/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			r := sseReader{bufio.NewScanner(resp.Body)}
			r.next(t) // the stats
			tc.end(st, done)
			// The response ends (the read returns) and the subscription
			// is cancelled.
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatal(err)
			}
			<-st.cancelled
		})
	}
}

func TestConsoleMounted(t *testing.T) {
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "console at "+r.URL.Path)
	})
	srv, _ := newServer(t, Options{Console: console})
	if a := do(t, srv, "GET", "/console/instances", "", nil); a.status != 200 || a.body != "console at /console/instances" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	srv2, _ := newServer(t, Options{})
	if a := do(t, srv2, "GET", "/console/", "", nil); a.status != 404 {
		t.Fatalf("no console: %d %s", a.status, a.body)
	}
}
