package server

import (
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/soap"
)

// Options configure the handler.
type Options struct {
	// Engine provides the deployed processes for the listing.
	Engine *process.Engine
	// SOAP serves every path that is not / or /metrics.
	SOAP *soap.Server
	// Front, when set, serves the SOAP requests in place of SOAP, which
	// it hands them to (a cluster.Forwarder, which sends some to other
	// nodes). WSDL requests go to SOAP directly.
	Front http.Handler
	// Gatherer is what /metrics exposes; nil disables /metrics.
	Gatherer prometheus.Gatherer
	// Logger receives errors of the metrics handler; nil discards them.
	Logger *slog.Logger
	// Admin, when set, serves the management API (/api/v1/) and the
	// console (/console/) beside the SOAP endpoints.
	Admin http.Handler
	// Probes, when set, answers GET /healthz and GET /readyz
	// (internal/health).
	Probes http.Handler
	// Services are other HTTP services on the SOAP listener, by path
	// (the path and everything under it): the WS-HumanTask client API at
	// WSO2 BPS's /services/HumanTaskClientAPIAdmin (internal/htclient).
	Services map[string]http.Handler
}

// New returns the orchd HTTP handler.
func New(opts Options) http.Handler {
	mux := http.NewServeMux()
	if opts.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{}))
	}
	if opts.Probes != nil {
		mux.Handle("GET /healthz", opts.Probes)
		mux.Handle("GET /readyz", opts.Probes)
	}
	for path, h := range opts.Services {
		mux.Handle(path, h)
		mux.Handle(path+"/", h)
	}
	if opts.Admin != nil {
		mux.Handle("/api/v1/", opts.Admin)
		mux.Handle("/console/", opts.Admin)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			opts.SOAP.ServeHTTP(w, r)
			return
		}
		list(w, r, opts.Engine)
	})
	var soapH http.Handler = opts.SOAP
	if opts.Front != nil {
		soapH = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				opts.Front.ServeHTTP(w, r)
				return
			}
			opts.SOAP.ServeHTTP(w, r)
		})
	}
	mux.Handle("/", soapH)
	return mux
}

// ProcessInfo is one deployed process in the listing.
type ProcessInfo struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Bundle    string         `json:"bundle"`
	File      string         `json:"file"`
	InMemory  bool           `json:"inMemory"`
	Endpoints []EndpointInfo `json:"endpoints"`
}

// EndpointInfo is one served port in the listing.
type EndpointInfo struct {
	Path       string   `json:"path"`
	WSDL       string   `json:"wsdl"`
	Service    string   `json:"service"`
	Port       string   `json:"port"`
	SOAP       string   `json:"soap"`
	Operations []string `json:"operations"`
}

// Listing describes the deployed processes, sorted by name.
func Listing(e *process.Engine) []ProcessInfo {
	var out []ProcessInfo
	for _, p := range e.Processes() {
		pi := ProcessInfo{Name: p.Name.Local, Namespace: p.Name.Space, Bundle: p.Bundle, File: p.File, InMemory: p.InMemory}
		for _, ep := range p.Endpoints {
			ei := EndpointInfo{Path: ep.Path, WSDL: ep.Path + "?wsdl", Service: ep.Service.String(), Port: ep.Port, SOAP: "1.1"}
			if ep.Version == 12 {
				ei.SOAP = "1.2"
			}
			for _, op := range ep.Operations {
				ei.Operations = append(ei.Operations, op.Name)
			}
			sort.Strings(ei.Operations)
			pi.Endpoints = append(pi.Endpoints, ei)
		}
		out = append(out, pi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

var page = template.Must(template.New("list").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>orchd</title></head>
<body>
<h1>orchd: deployed processes</h1>
{{if not .}}<p>No process is deployed.</p>{{end}}
{{range .}}<h2>{{.Name}}</h2>
<p>{{.Namespace}} &mdash; bundle {{.Bundle}}, {{.File}}{{if .InMemory}}, in-memory{{end}}</p>
<ul>{{range .Endpoints}}<li><a href="{{.Path}}?wsdl">{{.Path}}</a> ({{.Service}} port {{.Port}}, SOAP {{.SOAP}}): {{range $i, $o := .Operations}}{{if $i}}, {{end}}{{$o}}{{end}}</li>{{end}}</ul>
{{end}}
<p><a href="/metrics">metrics</a></p>
</body></html>
`))

func list(w http.ResponseWriter, r *http.Request, e *process.Engine) {
	info := Listing(e)
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(info)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, info)
}
