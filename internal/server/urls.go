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

// SelfURLs are the base URLs (scheme://host:port) at which a client on
// this machine reaches the endpoints served on addr: BaseURL's, addr's
// own host, and the loopback names that reach it with its port:
// localhost and the loopback IP of addr's family, or both loopback IPs
// when addr is unspecified (every interface). A run-time endpoint reference at one of them names this server.
func SelfURLs(scheme string, addr net.Addr) []string {
	urls := []string{BaseURL(scheme, addr)}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return urls
	}
	hosts := []string{host}
	switch ip := net.ParseIP(host); {
	case ip == nil:
	case ip.IsUnspecified():
		hosts = append(hosts, "localhost", "127.0.0.1", "::1")
	case ip.IsLoopback() && ip.To4() != nil:
		hosts = append(hosts, "localhost", "127.0.0.1")
	case ip.IsLoopback():
		hosts = append(hosts, "localhost", "::1")
	}
	for _, h := range hosts {
		urls = append(urls, scheme+"://"+net.JoinHostPort(h, port))
	}
	return urls
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
