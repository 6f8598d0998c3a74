package soap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/redact"
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
//
// A policy narrowed to a bundle's rules (Narrow) allows only what both
// the operator's policy and one of the bundle's rules allow: the bundle
// says which addresses its process may reach, the operator what any
// process may.
type PartnerPolicy struct {
	rules partnerallow.List
	// only, when set, are a bundle's rules (Narrow).
	only *partnerallow.List
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
		r, err := partnerallow.Parse(e)
		if err != nil {
			return nil, fmt.Errorf("--partner-allow %q: %w", e, err)
		}
		p.rules.Rules = append(p.rules.Rules, r)
	}
	return p, nil
}

// Narrow returns p limited to only (a bundle's deploy.xml rules): an
// address is allowed when p allows it and one of only's rules does. A
// nil only leaves p as it is.
func (p *PartnerPolicy) Narrow(only *partnerallow.List) *PartnerPolicy {
	if only == nil {
		return p
	}
	n := &PartnerPolicy{only: only}
	if p != nil {
		n.rules = p.rules
	}
	return n
}

// allowsName reports whether host is allowed by name (then whatever it
// resolves to is allowed: the operator named it, and so did the bundle
// if it has rules).
func (p *PartnerPolicy) allowsName(host string, port int) bool {
	return p.rules.AllowsName(host, port) && (p.only == nil || p.only.AllowsName(host, port))
}

// allowsIP reports whether a connection to ip:port, resolved from host,
// is allowed.
func (p *PartnerPolicy) allowsIP(host string, ip netip.Addr, port int) bool {
	ip = ip.Unmap()
	operator := p.rules.AllowsName(host, port) || p.rules.AllowsIP(ip, port) || !partnerallow.ForbiddenByDefault(ip)
	return operator && (p.only == nil || p.only.AllowsName(host, port) || p.only.AllowsIP(ip, port))
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
			if err != nil || !p.allowsIP(host, ap.Addr(), int(ap.Port())) {
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
// may carry (user:password@): they show as "***@". It works on the
// string, so an address that does not parse is redacted too; see
// redact.Address.
func Redact(s string) string { return redact.Address(s) }

// RedactText removes the credentials of every address in a text (an
// error message, a fault reason); see redact.Text.
func RedactText(s string) string { return redact.Text(s) }
