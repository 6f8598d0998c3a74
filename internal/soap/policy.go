package soap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// ErrPartnerNotAllowed means a partner address chosen at run time (a
// copied endpoint reference, a REST URI) is outside the partner address
// policy.
var ErrPartnerNotAllowed = errors.New("address not allowed by the partner address policy (--partner-allow)")

// PartnerPolicy is which addresses partner calls to addresses chosen at
// run time may connect to. It is checked where the connection is made
// (the dialer, after name resolution), so a name that resolves to a
// forbidden address (DNS rebinding) is refused too. By default every
// address is allowed except loopback, link-local (which holds the cloud
// metadata services, 169.254.169.254), unspecified, multicast and the
// other metadata addresses; a rule allows an address, forbidden or not.
// The zero value is the default policy.
type PartnerPolicy struct {
	rules []allowRule
}

// allowRule is one --partner-allow entry: a host name (a leading "*."
// matches its subdomains), or an IP prefix; and a port range (0, 0: any).
type allowRule struct {
	host       string
	prefix     netip.Prefix
	low, high  int
	byName     bool
	entry      string
	wildSuffix bool
}

// metadata are the addresses of cloud metadata services outside
// link-local.
var metadata = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// ParsePartnerPolicy reads allow rules, each "HOST", "HOST:PORT" or
// "HOST:LOW-HIGH", where HOST is a host name ("*.example.com" for its
// subdomains), an IP address or a CIDR prefix (IPv6 in brackets when a
// port follows: "[::1]:8080", "[fd00::/8]:443").
func ParsePartnerPolicy(entries []string) (*PartnerPolicy, error) {
	p := &PartnerPolicy{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		r, err := parseRule(e)
		if err != nil {
			return nil, fmt.Errorf("--partner-allow %q: %w", e, err)
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func parseRule(e string) (allowRule, error) {
	r := allowRule{entry: e}
	host, port := e, ""
	if strings.HasPrefix(e, "[") {
		end := strings.Index(e, "]")
		if end < 0 {
			return r, errors.New("no closing ]")
		}
		host, port = e[1:end], strings.TrimPrefix(e[end+1:], ":")
		if e[end+1:] != "" && !strings.HasPrefix(e[end+1:], ":") {
			return r, errors.New("want [IPv6]:PORT")
		}
	} else if i := strings.LastIndexByte(e, ':'); i >= 0 && strings.Count(e, ":") == 1 {
		host, port = e[:i], e[i+1:]
	}
	if port != "" {
		lo, hi, ranged := strings.Cut(port, "-")
		var err error
		if r.low, err = strconv.Atoi(lo); err != nil || r.low < 1 || r.low > 65535 {
			return r, fmt.Errorf("port %q: want 1-65535", lo)
		}
		r.high = r.low
		if ranged {
			if r.high, err = strconv.Atoi(hi); err != nil || r.high < r.low || r.high > 65535 {
				return r, fmt.Errorf("port range %q: want LOW-HIGH within 1-65535", port)
			}
		}
	}
	switch {
	case strings.Contains(host, "/"):
		pf, err := netip.ParsePrefix(host)
		if err != nil {
			return r, err
		}
		r.prefix = pf.Masked()
	default:
		if a, err := netip.ParseAddr(host); err == nil {
			r.prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
			break
		}
		name := strings.ToLower(strings.TrimSuffix(host, "."))
		if rest, ok := strings.CutPrefix(name, "*."); ok {
			name, r.wildSuffix = rest, true
		}
		if name == "" || strings.ContainsAny(name, " */[]") {
			return r, fmt.Errorf("%q is no host name, IP address or CIDR prefix", host)
		}
		r.host, r.byName = name, true
	}
	return r, nil
}

func (r *allowRule) portOK(port int) bool {
	return r.low == 0 || (port >= r.low && port <= r.high)
}

// allowsName reports whether a rule allows host by name (then whatever
// it resolves to is allowed: the operator named it).
func (p *PartnerPolicy) allowsName(host string, port int) bool {
	if p == nil {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for i := range p.rules {
		r := &p.rules[i]
		if !r.byName || !r.portOK(port) {
			continue
		}
		if host == r.host || (r.wildSuffix && strings.HasSuffix(host, "."+r.host)) {
			return true
		}
	}
	return false
}

// allowsIP reports whether a connection to ip:port is allowed.
func (p *PartnerPolicy) allowsIP(ip netip.Addr, port int) bool {
	ip = ip.Unmap()
	if p != nil {
		for i := range p.rules {
			r := &p.rules[i]
			if !r.byName && r.portOK(port) && r.prefix.Contains(ip) {
				return true
			}
		}
	}
	return !forbiddenByDefault(ip)
}

// forbiddenByDefault reports the addresses no rule has to forbid.
func forbiddenByDefault(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() ||
		ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, m := range metadata {
		if ip == m {
			return true
		}
	}
	return false
}

// dialer returns d's DialContext under the policy.
func (p *PartnerPolicy) dialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, ps, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		port, _ := strconv.Atoi(ps)
		if p.allowsName(host, port) {
			return d.DialContext(ctx, network, addr)
		}
		dd := *d
		dd.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !p.allowsIP(ap.Addr(), int(ap.Port())) {
				return fmt.Errorf("%w: %s", ErrPartnerNotAllowed, address)
			}
			return nil
		}
		return dd.DialContext(ctx, network, addr)
	}
}

// sameHostRedirects is the CheckRedirect of the policed client: a
// redirect to another host (or scheme) is not followed.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if !strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme {
		return fmt.Errorf("a redirect to another host (%s) is not followed", Redact(req.URL.Host))
	}
	return nil
}

// Redact returns s, a URL or an address, without the credentials it
// may carry (user:password@): they show as "***@". Text that is no URL
// is returned as it is, apart from userinfo before an @ in it.
func Redact(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = nil
		scheme, rest, ok := strings.Cut(u.String(), "://")
		if ok {
			return scheme + "://***@" + rest
		}
		return u.String()
	}
	return s
}

// RedactText removes the credentials of every http(s) URL in a text
// (an error message, a fault reason).
func RedactText(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for {
		i := indexURL(s)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		end := strings.IndexAny(s, " \t\r\n\"'<>")
		if end < 0 {
			end = len(s)
		}
		u := s[:end]
		// A URL's userinfo ends at the last @ before the path.
		if at := strings.LastIndex(hostPart(u), "@"); at >= 0 {
			scheme, _, _ := strings.Cut(u, "://")
			u = scheme + "://***@" + u[len(scheme)+3+at+1:]
		}
		b.WriteString(u)
		s = s[end:]
	}
}

// indexURL finds the next http:// or https:// in s.
func indexURL(s string) int {
	i := strings.Index(s, "http://")
	j := strings.Index(s, "https://")
	switch {
	case i < 0:
		return j
	case j < 0:
		return i
	}
	return min(i, j)
}

// hostPart is what follows the scheme of u up to its path.
func hostPart(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		rest = rest[:k]
	}
	return rest
}
