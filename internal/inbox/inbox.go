package inbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/taskform"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Options configure the inbox. Tasks and Outputs are required.
type Options struct {
	// Prefix is where the inbox is mounted, with a leading and a
	// trailing slash; empty means "/console/inbox/".
	Prefix string
	// Tasks is the task engine; people sign in through its directory.
	Tasks *humantask.Engine
	// Outputs finds a task's output schema (BundleSchemas).
	Outputs interface {
		Output(humantask.Task) (*Output, error)
	}
	// Logger receives what went wrong on the server's side; nil discards.
	Logger *slog.Logger
}

// sessionIdle ends a session nobody used for this long.
const sessionIdle = 8 * time.Hour

// maxSessions bounds the sessions kept (the oldest go first).
const maxSessions = 10000

// cookieName is the session cookie's name.
const cookieName = "orchd_inbox"

type session struct {
	who  humantask.Identity
	csrf string
	used time.Time
}

// Handler serves the inbox.
type Handler struct {
	o    Options
	log  *slog.Logger
	tmpl *template.Template

	mu       sync.Mutex
	sessions map[string]*session
}

//go:embed templates/*.html templates/inbox.css
var files embed.FS

// New returns the inbox's handler.
func New(o Options) *Handler {
	if o.Prefix == "" {
		o.Prefix = "/console/inbox/"
	}
	h := &Handler{o: o, log: o.Logger, sessions: map[string]*session{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.tmpl = template.Must(template.New("").Funcs(template.FuncMap{"list": func(s ...string) []string { return s }}).ParseFS(files, "templates/*.html"))
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, h.o.Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	if rest == "inbox.css" {
		b, _ := files.ReadFile("templates/inbox.css")
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write(b)
		return
	}
	if r.Method == http.MethodPost {
		if !sameOrigin(r) {
			http.Error(w, "cross-origin form post refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
	}
	switch {
	case rest == "login" && r.Method == http.MethodPost:
		h.login(w, r)
		return
	case rest == "" && r.Method == http.MethodGet && h.session(r) == nil:
		h.render(w, http.StatusOK, "login.html", view{Prefix: h.o.Prefix, Message: r.URL.Query().Get("msg")})
		return
	}
	s := h.session(r)
	if s == nil {
		http.Redirect(w, r, h.o.Prefix, http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodPost && subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		http.Error(w, "the form is stale or not ours: reload the page", http.StatusForbidden)
		return
	}
	switch {
	case rest == "logout" && r.Method == http.MethodPost:
		h.logout(w, r)
	case rest == "" && r.Method == http.MethodGet:
		h.list(w, r, s)
	case rest == "task" && r.Method == http.MethodGet:
		h.task(w, r, s, "", http.StatusOK)
	case rest == "task" && r.Method == http.MethodPost:
		h.act(w, r, s)
	default:
		http.NotFound(w, r)
	}
}

// sameOrigin refuses a post whose Origin (when the browser sends one)
// is another host.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return r.Header.Get("Sec-Fetch-Site") == "" || r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

func (h *Handler) session(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[c.Value]
	if s == nil || time.Since(s.used) > sessionIdle {
		delete(h.sessions, c.Value)
		return nil
	}
	s.used = time.Now()
	return s
}

func token() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24)
	return hex.EncodeToString(b[:])
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	who, err := h.o.Tasks.Authenticate(r.PostForm.Get("user"), r.PostForm.Get("password"))
	if errors.Is(err, humantask.ErrAuthBusy) {
		h.render(w, http.StatusServiceUnavailable, "login.html", view{Prefix: h.o.Prefix, Error: "The server is busy checking other sign-ins; try again."})
		return
	}
	if err != nil {
		h.log.Info("inbox sign-in refused", slog.String("user", r.PostForm.Get("user")), slog.String("remote", r.RemoteAddr))
		h.render(w, http.StatusUnauthorized, "login.html", view{Prefix: h.o.Prefix, Error: "Unknown user or wrong password."})
		return
	}
	id := token()
	h.mu.Lock()
	if len(h.sessions) >= maxSessions {
		var oldest string
		for k, s := range h.sessions {
			if oldest == "" || s.used.Before(h.sessions[oldest].used) {
				oldest = k
			}
		}
		delete(h.sessions, oldest)
	}
	h.sessions[id] = &session{who: who, csrf: token(), used: time.Now()}
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: h.o.Prefix, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, h.o.Prefix, http.StatusSeeOther)
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		h.mu.Lock()
		delete(h.sessions, c.Value)
		h.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: h.o.Prefix, MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, h.o.Prefix, http.StatusSeeOther)
}

// view is what a page is executed with.
type view struct {
	Prefix, CSRF, User string
	Message, Error     string
	States             []string
	Filter             filter
	Tasks              []row
	Task               *humantask.Task
	Due                string
	Inputs             []taskform.Input
	Faults             []string
	Can                map[string]bool
	FormError          string
}

type row struct {
	humantask.Task
	Due string
}

type filter struct {
	State, Process, Due string
	Priority            string
}

func (h *Handler) render(w http.ResponseWriter, code int, name string, v view) {
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, name, v); err != nil {
		h.log.Error("inbox page", slog.String("page", name), slog.Any("err", err))
		http.Error(w, "inbox page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

func (h *Handler) base(s *session) view {
	return view{Prefix: h.o.Prefix, CSRF: s.csrf, User: s.who.User}
}

var allStates = []humantask.State{humantask.Ready, humantask.Reserved, humantask.InProgress, humantask.Suspended,
	humantask.Completed, humantask.Failed, humantask.Error, humantask.Exited, humantask.Obsolete}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	v := h.base(s)
	v.Message = q.Get("msg")
	v.Filter = filter{State: q.Get("state"), Process: q.Get("process"), Due: q.Get("due"), Priority: q.Get("priority")}
	for _, st := range allStates {
		v.States = append(v.States, string(st))
	}
	f := humantask.Filter{Limit: 500}
	if st, ok := humantask.ParseState(v.Filter.State); ok {
		f.States = []humantask.State{st}
	}
	ts, err := h.o.Tasks.List(r.Context(), s.who, f)
	if err != nil {
		v.Error = err.Error()
	}
	maxPrio, _ := strconv.Atoi(v.Filter.Priority)
	due, _ := time.Parse("2006-01-02", v.Filter.Due)
	for _, t := range ts {
		next := nextDue(t)
		switch {
		case v.Filter.Process != "" && !strings.Contains(strings.ToLower(t.Process), strings.ToLower(v.Filter.Process)):
			continue
		case v.Filter.Priority != "" && t.Priority > maxPrio:
			continue
		case !due.IsZero() && (next.IsZero() || next.After(due.Add(24*time.Hour))):
			continue
		}
		v.Tasks = append(v.Tasks, row{Task: t, Due: when(next)})
	}
	sort.SliceStable(v.Tasks, func(i, j int) bool { return v.Tasks[i].Priority < v.Tasks[j].Priority })
	h.render(w, http.StatusOK, "list.html", v)
}

// nextDue is the earliest pending deadline of t, or zero.
func nextDue(t humantask.Task) time.Time {
	var d time.Time
	for _, p := range t.Deadlines {
		if !p.Met && (d.IsZero() || p.Due.Before(d)) {
			d = p.Due
		}
	}
	return d
}

func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// task renders task id's page; formErr is a rejected output's problem.
func (h *Handler) task(w http.ResponseWriter, r *http.Request, s *session, formErr string, code int) {
	id := r.FormValue("id")
	t, err := h.o.Tasks.Get(r.Context(), s.who, id)
	if err != nil {
		h.render(w, http.StatusNotFound, "list.html", view{Prefix: h.o.Prefix, CSRF: s.csrf, User: s.who.User, Error: "No such task, or not one of yours."})
		return
	}
	v := h.base(s)
	v.Task, v.Due, v.FormError, v.Message = &t, when(nextDue(t)), formErr, r.URL.Query().Get("msg")
	owner := t.ActualOwner == s.who.User
	v.Can = map[string]bool{
		"claim":    t.State == humantask.Ready,
		"start":    owner && t.State == humantask.Reserved,
		"release":  owner && (t.State == humantask.Reserved || t.State == humantask.InProgress),
		"complete": owner && (t.State == humantask.Reserved || t.State == humantask.InProgress),
		"skip":     t.Skipable && !t.State.Final(),
	}
	v.Can["fail"] = v.Can["complete"]
	if v.Can["complete"] {
		out, err := h.o.Outputs.Output(t)
		if err != nil {
			v.Error = "This task's output form is not available: " + err.Error()
			v.Can["complete"] = false
		} else {
			var cur *etree.Element
			if formErr != "" {
				cur, _ = taskform.Parse(out.Set.Outline(out.Elem), r.PostForm)
			} else {
				cur, _ = humantask.ParseXML(t.Output)
			}
			v.Inputs = taskform.Inputs(out.Set.Outline(out.Elem), cur)
			v.Faults = out.Faults
			v.Can["fail"] = len(out.Faults) > 0
		}
	}
	h.render(w, code, "task.html", v)
}

// act runs the operation a task page posted.
func (h *Handler) act(w http.ResponseWriter, r *http.Request, s *session) {
	ctx, id, op := r.Context(), r.PostForm.Get("id"), r.PostForm.Get("op")
	var err error
	done := map[string]string{"claim": "Claimed.", "start": "Started.", "release": "Released.", "complete": "Completed.", "fail": "Failed.", "skip": "Skipped."}[op]
	switch op {
	case humantask.OpClaim, humantask.OpStart, humantask.OpRelease, humantask.OpSkip:
		_, err = h.o.Tasks.Do(ctx, s.who, id, humantask.Action{Op: op})
	case humantask.OpFail: // the engine fails and completes a reserved task as a started one
		_, err = h.o.Tasks.Do(ctx, s.who, id, humantask.Action{Op: op, Fault: humantask.Fault{Name: r.PostForm.Get("fault")}})
	case humantask.OpComplete:
		var out string
		if out, err = h.output(ctx, s, id, r.PostForm); err != nil {
			h.task(w, r, s, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		_, err = h.o.Tasks.Do(ctx, s.who, id, humantask.Action{Op: op, Output: out})
	default:
		http.Error(w, "unknown operation", http.StatusBadRequest)
		return
	}
	msg := done
	if err != nil {
		msg = "Not done: " + err.Error()
	}
	target := h.o.Prefix + "task?" + url.Values{"id": {id}, "msg": {msg}}.Encode()
	if err == nil && (op == "complete" || op == "fail" || op == "skip" || op == "release") {
		target = h.o.Prefix + "?" + url.Values{"msg": {msg}}.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// output is the task's output from the posted form, valid against its
// schema.
func (h *Handler) output(ctx context.Context, s *session, id string, form url.Values) (string, error) {
	t, err := h.o.Tasks.Get(ctx, s.who, id)
	if err != nil {
		return "", err
	}
	out, err := h.o.Outputs.Output(t)
	if err != nil {
		return "", err
	}
	el, err := taskform.Parse(out.Set.Outline(out.Elem), form)
	if err != nil {
		return "", err
	}
	if err := out.Set.Validate(out.Elem, el); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), "/"))
	}
	doc := xmlparse.NewDocument()
	doc.SetRoot(el)
	return doc.WriteToString()
}
