package server

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// BaseURL is the URL prefix (scheme http or https) of the endpoints
// served on addr, for the endpoint references orchd hands out: an
// unspecified IP (listening on every interface) becomes the host name,
// else 127.0.0.1.
func BaseURL(scheme string, addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// DebugHandler serves the pprof endpoints under /debug/pprof/.
func DebugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
