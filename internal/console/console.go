package console

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/orchd/orchd/internal/mgmt"
)

// Options configure the console. The zero value serves it at /console/
// over the API at /api/v1/.
type Options struct {
	// Prefix is the path the console is mounted at, with a leading and a
	// trailing slash; empty means "/console/". The handler takes requests
	// with the prefix still on the path (mount it with mux.Handle(Prefix,
	// h), not under http.StripPrefix).
	Prefix string
	// API is the path of the management API on the same origin, with a
	// trailing slash; empty means "/api/v1/".
	API string
	// EndpointBase is the URL the processes' endpoint paths are served
	// under (the SOAP listener's, e.g. "http://127.0.0.1:8080"), for the
	// links to their WSDLs; empty means the console's own origin.
	EndpointBase string
	// Logger gets the errors of writing a page; nil discards them.
	Logger *slog.Logger
	// Inbox, when set, serves Prefix + "inbox/": the people's task inbox
	// (internal/inbox), which signs people in on its own.
	Inbox http.Handler
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// destructive are the actions the console asks to confirm.
var destructive = map[mgmt.Action]bool{
	mgmt.Terminate: true, mgmt.Delete: true, mgmt.Fault: true, mgmt.Cancel: true,
}

// page is one page of the console.
type page struct {
	ID    string // data-page: what the script renders
	Title string
	Nav   string // the navigation entry it belongs to
}

// pages maps a path under the prefix to its page.
var pages = map[string]page{
	"":          {ID: "processes", Title: "Processes", Nav: "processes"},
	"process":   {ID: "process", Title: "Process", Nav: "processes"},
	"instances": {ID: "instances", Title: "Instances", Nav: "instances"},
	"instance":  {ID: "instance", Title: "Instance", Nav: "instances"},
	"incidents": {ID: "incidents", Title: "Incidents", Nav: "incidents"},
}

// actionView is one action as the shell lists it.
type actionView struct {
	Name        mgmt.Action
	Destructive bool
}

// field is one filter of the instance list: its query parameter and
// label.
type field struct{ Name, Label string }

// timeFilters are the instance list's time ranges.
var timeFilters = []field{
	{"startedAfter", "Started after"}, {"startedBefore", "Started before"},
	{"activeAfter", "Active after"}, {"activeBefore", "Active before"},
}

// shell is what the page template is executed with.
type shell struct {
	page
	Prefix       string
	API          string
	EndpointBase string
	Actions      []actionView
	TimeFilters  []field
}

type handler struct {
	inbox                  http.Handler
	prefix, api, endpoints string
	log                    *slog.Logger
	tmpl                   *template.Template
	static                 http.Handler
}

// New returns the console's handler.
func New(o Options) http.Handler {
	h := &handler{inbox: o.Inbox, prefix: o.Prefix, api: o.API, endpoints: strings.TrimSuffix(o.EndpointBase, "/"), log: o.Logger}
	if h.prefix == "" {
		h.prefix = "/console/"
	}
	if h.api == "" {
		h.api = "/api/v1/"
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	// The templates are part of the binary: a parse error is a bug that
	// every test of the package catches.
	h.tmpl = template.Must(template.ParseFS(templateFS, "templates/*.html"))
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded tree always has it
	}
	h.static = http.StripPrefix(h.prefix+"static/", http.FileServerFS(sub))
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, h.prefix)
	if !ok {
		if r.URL.Path+"/" == h.prefix {
			http.Redirect(w, r, h.prefix, http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
		return
	}
	if h.inbox != nil && strings.HasPrefix(rest, "inbox/") {
		h.inbox.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the console only reads; actions go to the API", http.StatusMethodNotAllowed)
		return
	}
	if strings.HasPrefix(rest, "static/") {
		w.Header().Set("Cache-Control", "no-cache")
		h.static.ServeHTTP(w, r)
		return
	}
	p, ok := pages[strings.TrimSuffix(rest, "/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	s := shell{page: p, Prefix: h.prefix, API: h.api, EndpointBase: h.endpoints, TimeFilters: timeFilters}
	for _, a := range mgmt.Actions {
		s.Actions = append(s.Actions, actionView{Name: a, Destructive: destructive[a]})
	}
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, "page.html", s); err != nil {
		h.log.Error("console page", slog.String("page", p.ID), slog.Any("err", err))
		http.Error(w, "console page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	// Everything the page loads comes from orchd itself.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(buf.Bytes())
}
