package mgmtbackend_test

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/mgmtbackend"
	"github.com/orchd/orchd/internal/persist"
)

// TestTaskRoutes drives the task routes over HTTP, through the admin
// handler and this backend, over a task engine on a real bbolt store and
// the example's people file: the statuses of each refusal, and that no
// admin token is needed or accepted for them.
func TestTaskRoutes(t *testing.T) {
	dir := t.TempDir()
	st, err := persist.Open(filepath.Join(dir, "orchd.db"), persist.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b, err := os.ReadFile("../../deploy/expense-approval/people.txt")
	if err != nil {
		t.Fatal(err)
	}
	people := filepath.Join(dir, "people")
	if err := os.WriteFile(people, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := humantask.LoadDirectory(people, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := humantask.New(humantask.Options{Store: st, Directory: d})
	defer e.Close()
	if err := e.Deploy("expense-approval", 1, "../../deploy/expense-approval"); err != nil {
		t.Fatal(err)
	}
	def, _ := e.Definition(xml.Name{Space: "urn:example:expense:task", Local: "ApproveExpense"})
	task, err := e.Create(context.Background(), humantask.CreateRequest{Def: def,
		Input: `<ex:expenseRequest xmlns:ex="urn:example:expense"><ex:id>E-1</ex:id><ex:employee>mark</ex:employee><ex:amount>5</ex:amount><ex:description>d</ex:description></ex:expenseRequest>`})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(admin.New(admin.Options{Backend: mgmtbackend.New(mgmtbackend.Options{Tasks: e}), Token: "an-admin-token-of-some-length"}))
	defer srv.Close()
	call := func(method, path, user, pass, bearer, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	id := "/api/v1/tasks/" + task.ID
	for _, tc := range []struct {
		name, method, path, user, pass, bearer, body string
		status                                       int
		contains                                     string
	}{
		{"no credentials", "GET", "/api/v1/tasks", "", "", "", "", 401, "credentials"},
		{"the admin token is no person", "GET", "/api/v1/tasks", "", "", "an-admin-token-of-some-length", "", 401, "credentials"},
		{"wrong password", "GET", "/api/v1/tasks", "ann", "mark-secret", "", "", 401, "unknown user or wrong password"},
		{"unknown user", "GET", "/api/v1/tasks", "zed", "zed-secret", "", "", 401, "unknown user or wrong password"},
		{"an outsider sees nothing", "GET", "/api/v1/tasks", "eve", "eve-secret", "", "", 200, "[]"},
		{"an outsider gets 404", "GET", id, "eve", "eve-secret", "", "", 404, "no such task"},
		{"a manager lists it", "GET", "/api/v1/tasks", "ann", "ann-secret", "", "", 200, task.ID},
		{"a bad state filter", "GET", "/api/v1/tasks?state=DONE", "ann", "ann-secret", "", "", 400, "state"},
		{"the administrator may not claim", "POST", id + "/claim", "finn", "finn-secret", "", "", 403, "potentialOwners"},
		{"complete before a claim", "POST", id + "/complete", "ann", "ann-secret", "", `{"output":"<x/>"}`, 403, "actualOwner"},
		{"a manager claims", "POST", id + "/claim", "ann", "ann-secret", "", "", 200, `"RESERVED"`},
		{"claimed twice", "POST", id + "/claim", "ann", "ann-secret", "", "", 409, "RESERVED"},
		{"an unknown operation", "POST", id + "/approve", "ann", "ann-secret", "", "", 404, "unknown task operation"},
		{"a bad body", "POST", id + "/complete", "ann", "ann-secret", "", `{`, 400, "task action"},
		{"setPriority without one", "POST", id + "/setPriority", "ann", "ann-secret", "", `{}`, 400, "priority"},
		{"the owner completes", "POST", id + "/complete", "ann", "ann-secret", "", `{"output":"<x/>"}`, 200, `"COMPLETED"`},
	} {
		status, body := call(tc.method, tc.path, tc.user, tc.pass, tc.bearer, tc.body)
		if status != tc.status || !strings.Contains(body, tc.contains) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, status, body, tc.status, tc.contains)
		}
	}
}
