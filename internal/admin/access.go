package admin

import (
	"crypto/subtle"
	"net"
	"net/http"
	"os"
	"strings"
)

// Access says who may use the API (and what else it guards, Protect):
// the bearer tokens, the Host names it answers, or that it is off. The
// zero value lets anyone read and nobody mutate, for any Host.
type Access struct {
	// Token is the admin token: it reads and mutates. ReadToken, when
	// set, only reads (GET, HEAD, the event stream). With either set,
	// every request needs one of them; with neither, reads are open and
	// mutations are refused (403, read-only).
	Token, ReadToken string
	// Hosts are the Host names (no port, lower case) a request may name;
	// AnyIP also lets any IP literal through (a listener on every
	// interface). Empty Hosts and AnyIP false: any Host. A browser
	// pointed at the API through a name that resolves to it (DNS
	// rebinding) sends that name, and is refused.
	Hosts []string
	AnyIP bool
	// Off, when set, answers every request 403 with it: the API is not
	// served here (see ListenerAccess).
	Off string
}

// Reasons of refusals.
const (
	// ReadOnlyReason is the 403 answer to a mutation when no admin token
	// is configured.
	ReadOnlyReason = "the API is read-only: start orchd with --admin-token-file"
	// OffReason is the 403 answer of an API with no token on a listener
	// that is not loopback.
	OffReason = "the management API is off on this listener: it is not loopback and no token is configured; start orchd with --admin-token-file (a token of at least 16 bytes)"
	// MinTokenLen is the shortest token orchd serve accepts, in bytes:
	// a shorter one is refused at start.
	MinTokenLen = 16
)

// ListenerAccess returns the Access of the API on a listener bound to
// addr: the Host names that reach it (its IP, localhost for a loopback
// one; any IP, localhost and the host's name for one on every
// interface), plus extra; and Off when Exposed(addr, token, readToken).
func ListenerAccess(addr net.Addr, token, readToken string, extra []string) Access {
	a := Access{Token: token, ReadToken: readToken}
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		a.Hosts = append(a.Hosts, strings.ToLower(host))
	case ip.IsUnspecified():
		a.AnyIP = true
		a.Hosts = append(a.Hosts, "localhost")
		if h, err := os.Hostname(); err == nil && h != "" {
			a.Hosts = append(a.Hosts, strings.ToLower(h))
		}
	default:
		a.Hosts = append(a.Hosts, ip.String())
		if ip.IsLoopback() {
			a.Hosts = append(a.Hosts, "localhost")
		}
	}
	for _, h := range extra {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			a.Hosts = append(a.Hosts, h)
		}
	}
	if Exposed(addr, token, readToken) {
		a.Off = OffReason
	}
	return a
}

// Exposed is orchd's one rule for the API on a network: it reports
// whether the API on a listener bound to addr must be off, that is
// whether no token is configured and the listener is not loopback,
// whichever flag opened it (--listen, --admin-listen). An unspecified
// address (0.0.0.0, ::) listens on every interface and a host name may
// resolve to any: neither is loopback.
func Exposed(addr net.Addr, token, readToken string) bool {
	if token != "" || readToken != "" {
		return false
	}
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// Describe says in a few words how the API is guarded, for the start-up
// log.
func (a *Access) Describe() string {
	switch {
	case a.Off != "":
		return "off (no token, not loopback)"
	case a.Token != "" && a.ReadToken != "":
		return "admin and read tokens"
	case a.Token != "":
		return "admin token"
	case a.ReadToken != "":
		return "read token, read-only"
	}
	return "no token: reads open, read-only"
}

// hostAllowed reports whether r's Host header names this server.
func (a *Access) hostAllowed(r *http.Request) bool {
	if len(a.Hosts) == 0 && !a.AnyIP {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if a.AnyIP && net.ParseIP(host) != nil {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	for _, h := range a.Hosts {
		if h == host {
			return true
		}
	}
	return false
}

// check returns 0 when r may go on, else the status and the reason.
func (a *Access) check(r *http.Request) (int, string) {
	if a.Off != "" {
		return http.StatusForbidden, a.Off
	}
	if !a.hostAllowed(r) {
		return http.StatusMisdirectedRequest, "Host " + r.Host + " does not name this server (add it to --admin-hosts)"
	}
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if a.Token == "" && a.ReadToken == "" {
		if read {
			return 0, ""
		}
		return http.StatusForbidden, ReadOnlyReason
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return http.StatusUnauthorized, "this needs a token: send \"Authorization: Bearer <token>\" (the token of --admin-token-file, or for reads --admin-read-token-file)"
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return http.StatusUnauthorized, "the Authorization header is not \"Bearer <token>\""
	}
	tok = strings.TrimSpace(tok)
	switch {
	case equal(tok, a.Token):
		return 0, ""
	case equal(tok, a.ReadToken):
		if read {
			return 0, ""
		}
		return http.StatusForbidden, "the read token only reads: mutations need the token of --admin-token-file"
	}
	return http.StatusUnauthorized, "wrong token"
}

// grant names what an admitted request's token may do: "admin", "read",
// or "none" (no token configured).
func (a *Access) grant(r *http.Request) string {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	switch {
	case equal(tok, a.Token):
		return "admin"
	case equal(tok, a.ReadToken):
		return "read"
	}
	return "none"
}

// equal compares a token in constant time; an unset token matches
// nothing.
func equal(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// refuse writes check's refusal.
func refuse(w http.ResponseWriter, status int, reason string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="orchd", error="invalid_token"`)
	}
	writeError(w, status, reason)
}
