package publicurl

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Resolver computes the public base URL of requests. The zero value takes
// scheme, host and port from the request itself (TLS means https; the
// Host header, when valid, else the local address the request reached)
// and ignores forwarded headers.
type Resolver struct {
	public         string // from --public-url, without a trailing slash; "" none
	trustForwarded bool
}

// New returns a Resolver. public, when not empty, is the base URL every
// request is given (orchd behind a proxy); it must be an absolute http or
// https URL with a host and no credentials, query or fragment (a path
// prefix is kept). trustForwarded makes X-Forwarded-Proto and
// X-Forwarded-Host name the scheme and host when public is empty: only
// behind a proxy that sets them, since a client can send them too.
func New(public string, trustForwarded bool) (*Resolver, error) {
	p, err := ParsePublic(public)
	if err != nil {
		return nil, err
	}
	return &Resolver{public: p, trustForwarded: trustForwarded}, nil
}

// Errors of ParsePublic.
var (
	ErrNotAbsolute = errors.New("not an absolute http or https URL with a host")
	ErrCredentials = errors.New("must not carry credentials (user:password@)")
	ErrQuery       = errors.New("must not have a query or fragment")
)

// ParsePublic checks a --public-url value and returns it without a
// trailing slash; "" stays "".
func ParsePublic(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("public URL: %w", err)
	}
	if u.User != nil {
		return "", fmt.Errorf("public URL: %w", ErrCredentials)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("public URL %q: %w", s, ErrNotAbsolute)
	}
	if _, ok := Host(u.Host); !ok {
		return "", fmt.Errorf("public URL %q: host %q: %w", s, u.Host, ErrNotAbsolute)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("public URL %q: %w", s, ErrQuery)
	}
	u.Host = strings.ToLower(u.Host)
	u.Scheme = strings.ToLower(u.Scheme)
	return strings.TrimRight(u.String(), "/"), nil
}

// Configured is the --public-url base URL, without a trailing slash; ""
// when none was set.
func (rs *Resolver) Configured() string {
	if rs == nil {
		return ""
	}
	return rs.public
}

// Base returns the base URL (scheme://host[:port], or the public URL with
// its path prefix) of r, without a trailing slash.
func (rs *Resolver) Base(r *http.Request) string {
	if rs != nil && rs.public != "" {
		return rs.public
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host, ok := Host(r.Host)
	if rs != nil && rs.trustForwarded {
		if p := strings.ToLower(firstValue(r.Header.Get("X-Forwarded-Proto"))); p == "http" || p == "https" {
			scheme = p
		}
		if h, fok := Host(firstValue(r.Header.Get("X-Forwarded-Host"))); fok {
			host, ok = h, true
		}
	}
	if !ok {
		host = localHost(r)
	}
	return scheme + "://" + host
}

// firstValue is the first of a comma-separated header value (the one the
// proxy nearest the client set), trimmed.
func firstValue(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

// localHost is the address r reached on this server, or "localhost" when
// the server did not record it.
func localHost(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		if h, p, err := net.SplitHostPort(a.String()); err == nil {
			if ip := net.ParseIP(h); ip != nil && !ip.IsUnspecified() {
				return net.JoinHostPort(ip.String(), p)
			}
		}
	}
	return "localhost"
}

// Host validates a Host header value (host or host:port): a DNS name of
// letters, digits, '-', '_' and '.', an IPv4 address, or an IPv6 address
// in brackets without a zone, with an optional port of 1 to 65535. It
// returns the value lower-cased, and false for anything else (empty,
// credentials, paths, spaces, quotes), which must not reach a document.
func Host(h string) (string, bool) {
	if h == "" || len(h) > 261 {
		return "", false
	}
	name, port := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", false
		}
		ip := net.ParseIP(h[1:end])
		if ip == nil || ip.To4() != nil && !strings.Contains(h[1:end], ":") {
			return "", false
		}
		name, port = h[:end+1], h[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return "", false
		}
		port = strings.TrimPrefix(port, ":")
		if port == "" && strings.HasSuffix(h, ":") {
			return "", false
		}
	} else {
		if i := strings.LastIndexByte(h, ':'); i >= 0 {
			name, port = h[:i], h[i+1:]
			if port == "" {
				return "", false
			}
		}
		if !dnsName(name) {
			return "", false
		}
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return "", false
		}
	}
	return strings.ToLower(h), true
}

// dnsName reports whether s is a host name or IPv4 address: labels of
// letters, digits, '-' and '_' separated by single dots, at most 253
// characters.
func dnsName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
