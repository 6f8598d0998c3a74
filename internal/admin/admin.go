package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/buildinfo"
	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/mgmt"
)

// Stream is the live feed of instance events the event stream relays.
// Subscribe returns a bounded channel of events and a function that ends
// the subscription; the channel is closed when the subscriber is dropped
// (it fell behind) or cancelled.
type Stream interface {
	Subscribe() (<-chan events.Event, func())
}

// Options configure the handler. Backend is required; every other zero
// value works.
type Options struct {
	// Backend is what the API reads and operates on.
	Backend mgmt.Backend
	// Stream feeds GET /api/v1/events; nil answers it 503 (orchd serve
	// keeps no events without --timeline).
	Stream Stream
	// Access is who may read and mutate (access.go); its zero value
	// lets anyone read and nobody mutate.
	Access Access
	// Token, when set, is Access.Token (the admin token).
	Token string
	// Console is served at /console/ (with its full path); nil serves
	// nothing there.
	Console http.Handler
	// Logger receives internal errors (500s); nil discards them.
	Logger *slog.Logger
	// Build is which orchd serves the API, for GET /api/v1/ (what
	// orchd version prints).
	Build buildinfo.Info
	// MaxBundle is the largest bundle upload in bytes; zero means 64 MiB.
	MaxBundle int64
	// StatsEvery is how often the event stream sends the process list;
	// zero means every second. Heartbeat is how often it sends a comment
	// line (which keeps proxies from closing an idle stream); zero means
	// 15s.
	StatsEvery, Heartbeat time.Duration
	// Done, when closed, ends every event stream (close it before
	// http.Server.Shutdown, which does not wait for streams otherwise).
	Done <-chan struct{}
}

// Limits of the API.
const (
	// DefaultLimit is a listing page's size when limit is not given.
	DefaultLimit = 50
	// MaxLimit is the largest page a listing returns.
	MaxLimit = mgmt.MaxPage
	// DefaultBulk is how many instances a bulk action touches when max
	// is not given; MaxBulk the most it may touch.
	DefaultBulk = 100
	MaxBulk     = 10000
	// DefaultMaxBundle is the largest bundle upload by default.
	DefaultMaxBundle = 64 << 20
)

type api struct {
	opts   Options
	log    *slog.Logger
	routes *http.ServeMux
}

// New returns the handler of /api/v1/ and /console/. Any other path is
// a JSON 404.
func New(opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBundle <= 0 {
		opts.MaxBundle = DefaultMaxBundle
	}
	if opts.StatsEvery <= 0 {
		opts.StatsEvery = time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Token != "" {
		opts.Access.Token = opts.Token
	}
	a := &api{opts: opts, log: opts.Logger, routes: http.NewServeMux()}
	m := a.routes
	m.HandleFunc("GET /api/v1/{$}", a.info)
	m.HandleFunc("GET /api/v1/cluster", a.cluster)
	m.HandleFunc("GET /api/v1/processes", a.processes)
	m.HandleFunc("GET /api/v1/processes/{name}", a.process)
	m.HandleFunc("GET /api/v1/processes/{name}/diagram", a.diagram)
	m.HandleFunc("POST /api/v1/processes/{name}/versions/{version}/{op}", a.setActive)
	m.HandleFunc("POST /api/v1/processes/{name}/migrate", a.migrate)
	m.HandleFunc("GET /api/v1/bundles", a.bundles)
	m.HandleFunc("PUT /api/v1/bundles/{name}", a.deploy)
	m.HandleFunc("DELETE /api/v1/bundles/{name}", a.undeploy)
	m.HandleFunc("GET /api/v1/instances", a.instances)
	m.HandleFunc("GET /api/v1/instances/{id}", a.instance)
	m.HandleFunc("POST /api/v1/instances/{id}/{action}", a.act)
	m.HandleFunc("POST /api/v1/instances/bulk/{action}", a.bulk)
	m.HandleFunc("GET /api/v1/events", a.events)
	a.incidentRoutes(m)
	m.HandleFunc("GET /api/v1/tasks", a.tasks)
	m.HandleFunc("GET /api/v1/tasks/{id}", a.task)
	m.HandleFunc("POST /api/v1/tasks/{id}/{op}", a.taskAct)
	if opts.Console != nil {
		m.Handle("/console/", opts.Console)
	}
	return a
}

// ServeHTTP checks the request's access (Access.check: the Host, then
// the token of every API request, and of every mutation on the
// console's paths), then routes; a path no route has is a JSON 404, a
// method no route of the path takes a JSON 405.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	acc := &a.opts.Access
	if a.opts.Console != nil && strings.HasPrefix(r.URL.Path, "/console/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// The console's pages are a shell without data: a browser
		// loads them without a token, and they read through the API
		// with the one the operator gives.
		plain := *acc
		plain.Token, plain.ReadToken = "", ""
		acc = &plain
	}
	if isTaskPath(r.URL.Path) {
		// A person's routes: its own credentials, not the tokens.
		if status, reason := acc.taskAccess(r); status != 0 {
			refuse(w, status, reason)
			return
		}
		a.routes.ServeHTTP(w, r)
		return
	}
	if status, reason := acc.check(r); status != 0 {
		refuse(w, status, reason)
		return
	}
	if h := r.Header.Get("Authorization"); h != "" {
		// For a cluster Backend's requests to the other nodes.
		r = r.WithContext(mgmt.WithAuthorization(r.Context(), h))
	}
	if _, pattern := a.routes.Handler(r); pattern != "" {
		a.routes.ServeHTTP(w, r) // which sets the path values
		return
	}
	if allow := a.allowed(r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	writeError(w, http.StatusNotFound, "no such route: "+r.URL.Path+" (the API is under /api/v1/)")
}

// allowed lists the methods some route takes on r's path.
func (a *api) allowed(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		rr := r.Clone(r.Context())
		rr.Method = m
		if _, p := a.routes.Handler(rr); p != "" {
			out = append(out, m)
		}
	}
	return out
}

// statusOf maps a Backend error to its HTTP status.
func statusOf(err error) int {
	switch {
	case errors.Is(err, mgmt.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, mgmt.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, mgmt.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, mgmt.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, mgmt.ErrUnauthorized):
		return http.StatusUnauthorized // another node's, forwarded (clusterview)
	case errors.Is(err, mgmt.ErrForbidden):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// fail answers a Backend error; a 500 is logged.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		if r.Context().Err() != nil {
			return // the client went away
		}
		a.log.Error("management API", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	writeError(w, status, err.Error())
}

// errorBody is every error answer.
type errorBody struct {
	Error string `json:"error"`
	// Errors are a failed deploy's problems, one per line.
	Errors []string `json:"errors,omitempty"`
	// Bundle is the bundle a failed deploy left (422).
	Bundle *mgmt.Bundle `json:"bundle,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// info is GET /api/v1/: whether the API mutates at all, and what the
// request's token may do ("admin", "read", or "none" when no token is
// configured).
func (a *api) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		ReadOnly bool   `json:"readOnly"`
		Access   string `json:"access"`
		buildinfo.Info
	}{a.opts.Access.Token == "", a.opts.Access.grant(r), a.opts.Build})
}

// scopeParam reads the only parameter r may have, scope: true for
// "local".
func scopeParam(r *http.Request) (bool, error) {
	if err := onlyParams(r, []string{"scope"}); err != nil {
		return false, err
	}
	switch s := r.URL.Query().Get("scope"); s {
	case "":
		return false, nil
	case mgmt.ScopeLocal:
		return true, nil
	default:
		return false, fmt.Errorf("scope %q: want %s (this node alone) or nothing (the whole cluster)", s, mgmt.ScopeLocal)
	}
}

// cluster is GET /api/v1/cluster: the live nodes; a Backend that knows
// no cluster is one node, itself.
func (a *api) cluster(w http.ResponseWriter, r *http.Request) {
	local, err := scopeParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	cb, ok := a.opts.Backend.(mgmt.ClusterBackend)
	if !ok {
		writeJSON(w, http.StatusOK, mgmt.Cluster{Nodes: []mgmt.Node{{ID: "local", Self: true}}})
		return
	}
	c, err := cb.Cluster(r.Context(), local)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (a *api) processes(w http.ResponseWriter, r *http.Request) {
	local, err := scopeParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var ps []mgmt.Process
	if cb, ok := a.opts.Backend.(mgmt.ClusterBackend); ok && local {
		ps, err = cb.LocalProcesses(r.Context())
	} else {
		ps, err = a.opts.Backend.Processes(r.Context())
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if ps == nil {
		ps = []mgmt.Process{}
	}
	writeJSON(w, http.StatusOK, ps)
}

func (a *api) process(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, []string{"version"}); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	v, err := intParam(r.URL.Query(), "version", 0, 0, -1)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	p, err := a.opts.Backend.Process(r.Context(), r.PathValue("name"), v)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (a *api) setActive(w http.ResponseWriter, r *http.Request) {
	var active bool
	switch op := r.PathValue("op"); op {
	case "retire":
	case "activate":
		active = true
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown version operation %q (want retire or activate)", op))
		return
	}
	v, err := strconv.Atoi(r.PathValue("version"))
	if err != nil || v < 1 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("version %q: want a version number (1, 2, ...)", r.PathValue("version")))
		return
	}
	name := r.PathValue("name")
	if err := a.opts.Backend.SetActive(r.Context(), name, v, active); err != nil {
		a.fail(w, r, err)
		return
	}
	state := "retired"
	if active {
		state = "active"
	}
	writeJSON(w, http.StatusOK, struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
		State   string `json:"state"`
	}{name, v, state})
}

func (a *api) bundles(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, nil); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	bs, err := a.opts.Backend.Bundles(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if bs == nil {
		bs = []mgmt.Bundle{}
	}
	writeJSON(w, http.StatusOK, bs)
}

// deploy is PUT /api/v1/bundles/{name}: the body is the bundle's zip.
func (a *api) deploy(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := checkBundleName(name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if r.ContentLength > a.opts.MaxBundle {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the bundle is %d bytes; at most %d are accepted", r.ContentLength, a.opts.MaxBundle))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.opts.MaxBundle))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the bundle is larger than %d bytes", a.opts.MaxBundle))
			return
		}
		writeError(w, http.StatusBadRequest, "reading the bundle: "+err.Error())
		return
	}
	if len(body) == 0 {
		writeError(w, http.StatusBadRequest, "the body is empty: send the bundle as a zip archive")
		return
	}
	b, err := a.opts.Backend.Deploy(r.Context(), name, body)
	if err != nil {
		if errors.Is(err, mgmt.ErrInvalid) {
			eb := errorBody{Error: err.Error(), Bundle: b}
			if b != nil && len(b.Errors) > 0 {
				// The problems are listed once, in errors; the message
				// counts them.
				eb.Errors = b.Errors
				what := "problems"
				if len(b.Errors) == 1 {
					what = "problem"
				}
				eb.Error = fmt.Sprintf("bundle %s: %v: %d %s", name, mgmt.ErrInvalid, len(b.Errors), what)
			}
			writeJSON(w, http.StatusUnprocessableEntity, eb)
			return
		}
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, b)
}

// checkBundleName refuses names that are no plain folder name.
func checkBundleName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("bundle name %q: want a plain folder name", name)
	}
	return nil
}

func (a *api) undeploy(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := checkBundleName(name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := a.opts.Backend.Undeploy(r.Context(), name); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}{name, "undeployed"})
}

func (a *api) instances(w http.ResponseWriter, r *http.Request) {
	q, err := ParseQuery(r.URL.Query(), false)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	p, err := a.opts.Backend.Instances(r.Context(), q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if p.Instances == nil {
		p.Instances = []mgmt.Instance{}
	}
	writeJSON(w, http.StatusOK, p)
}

func (a *api) instance(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, nil); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	d, err := a.opts.Backend.Instance(r.Context(), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// ActResult answers an action on one instance: its state after it
// ("deleted" once deleted).
type ActResult struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

func (a *api) act(w http.ResponseWriter, r *http.Request) {
	act, ok := action(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if err := a.opts.Backend.Act(r.Context(), id, act); err != nil {
		a.fail(w, r, err)
		return
	}
	res := ActResult{ID: id, State: "deleted"}
	d, err := a.opts.Backend.Instance(r.Context(), id)
	switch {
	case err == nil:
		res.State = d.State
	case !errors.Is(err, mgmt.ErrNotFound):
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// action reads the {action} of the path, answering 404 for an unknown one.
func action(w http.ResponseWriter, r *http.Request) (mgmt.Action, bool) {
	act := mgmt.Action(r.PathValue("action"))
	if !act.Valid() {
		names := make([]string, len(mgmt.Actions))
		for i, x := range mgmt.Actions {
			names[i] = string(x)
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown action %q (actions: %s)", act, strings.Join(names, ", ")))
		return "", false
	}
	return act, true
}
