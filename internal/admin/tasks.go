package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/orchd/orchd/internal/mgmt"
)

// The task routes (mgmt's tasks.go): a person of the people directory
// authenticates with HTTP Basic and its own password; the admin token
// plays no part. The Host check and the API being off on an exposed
// listener still apply (taskAccess).

// maxTaskBody bounds a task action's JSON (an output message).
const maxTaskBody = 4 << 20

// isTaskPath reports whether p is a task route's path.
func isTaskPath(p string) bool {
	return p == "/api/v1/tasks" || strings.HasPrefix(p, "/api/v1/tasks/")
}

// taskAccess checks the Host and the API being on, not the tokens.
func (a *Access) taskAccess(r *http.Request) (int, string) {
	if a.Off != "" {
		return http.StatusForbidden, a.Off
	}
	if !a.hostAllowed(r) {
		return http.StatusMisdirectedRequest, "Host " + r.Host + " does not name this server (add it to --admin-hosts)"
	}
	return 0, ""
}

// taskUser authenticates r's person, answering the refusal itself.
func (a *api) taskUser(w http.ResponseWriter, r *http.Request) (mgmt.TaskUser, mgmt.TaskBackend, bool) {
	tb, ok := a.opts.Backend.(mgmt.TaskBackend)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "this orchd serves no human tasks")
		return mgmt.TaskUser{}, nil, false
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="orchd tasks", charset="UTF-8"`)
		writeError(w, http.StatusUnauthorized, "the task routes need a person's credentials: \"Authorization: Basic\" with a user of --people-file and its password")
		return mgmt.TaskUser{}, nil, false
	}
	u, err := tb.TaskUser(r.Context(), user, pass)
	if err != nil {
		if errors.Is(err, mgmt.ErrUnauthorized) {
			w.Header().Set("WWW-Authenticate", `Basic realm="orchd tasks", charset="UTF-8"`)
			writeError(w, http.StatusUnauthorized, "unknown user or wrong password")
			return mgmt.TaskUser{}, nil, false
		}
		a.fail(w, r, err)
		return mgmt.TaskUser{}, nil, false
	}
	return u, tb, true
}

func (a *api) tasks(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, []string{"state", "name", "role", "limit"}); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	q := r.URL.Query()
	limit, err := intParam(q, "limit", DefaultLimit, 1, MaxLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	u, tb, ok := a.taskUser(w, r)
	if !ok {
		return
	}
	ts, err := tb.Tasks(r.Context(), u, mgmt.TaskQuery{States: q["state"], Name: q.Get("name"), Role: q.Get("role"), Limit: limit})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if ts == nil {
		ts = []mgmt.Task{}
	}
	writeJSON(w, http.StatusOK, ts)
}

func (a *api) task(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, nil); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	u, tb, ok := a.taskUser(w, r)
	if !ok {
		return
	}
	t, err := tb.Task(r.Context(), u, r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (a *api) taskAct(w http.ResponseWriter, r *http.Request) {
	op := r.PathValue("op")
	if !slices.Contains(mgmt.TaskOps, op) {
		writeError(w, http.StatusNotFound, "unknown task operation "+op+" (want one of "+strings.Join(mgmt.TaskOps, ", ")+")")
		return
	}
	var act mgmt.TaskAction
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTaskBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	if len(body) > maxTaskBody {
		writeError(w, http.StatusRequestEntityTooLarge, "a task action's body is at most 4 MiB")
		return
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &act); err != nil {
			writeError(w, http.StatusBadRequest, "the body is not a task action (JSON): "+err.Error())
			return
		}
	}
	act.Op = op
	u, tb, ok := a.taskUser(w, r)
	if !ok {
		return
	}
	t, err := tb.ActOnTask(r.Context(), u, r.PathValue("id"), act)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}
