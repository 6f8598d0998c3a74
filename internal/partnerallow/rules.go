package partnerallow

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule allows the addresses of a host name (a leading "*." matches its
// subdomains too), or of an IP prefix, on a port range (0, 0: any port).
type Rule struct {
	host       string
	prefix     netip.Prefix
	low, high  int
	byName     bool
	wildSuffix bool
	// Entry is the rule as written.
	Entry string
}

// List is a set of rules; the zero value and nil allow nothing.
type List struct {
	Rules []Rule
}

// Key is the rules as written, one string that is the same for two
// lists of the same rules (whichever deploy parsed them).
func (l *List) Key() string {
	if l == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range l.Rules {
		b.WriteString(r.Entry)
		b.WriteByte('\n')
	}
	return b.String()
}

// Parse reads one rule, "HOST", "HOST:PORT" or "HOST:LOW-HIGH", where
// HOST is a host name ("*.example.com" for its subdomains), an IP address
// or a CIDR prefix (IPv6 in brackets when a port follows: "[::1]:8080",
// "[fd00::/8]:443").
func Parse(e string) (Rule, error) {
	host, port := e, ""
	if strings.HasPrefix(e, "[") {
		end := strings.Index(e, "]")
		if end < 0 {
			return Rule{Entry: e}, errors.New("no closing ]")
		}
		host, port = e[1:end], strings.TrimPrefix(e[end+1:], ":")
		if e[end+1:] != "" && !strings.HasPrefix(e[end+1:], ":") {
			return Rule{Entry: e}, errors.New("want [IPv6]:PORT")
		}
	} else if i := strings.LastIndexByte(e, ':'); i >= 0 && strings.Count(e, ":") == 1 {
		host, port = e[:i], e[i+1:]
	}
	r, err := ParseHostPort(host, port)
	r.Entry = e
	return r, err
}

// ParseHostPort reads a rule given as its host (a host name, an IP
// address or a CIDR prefix, IPv6 without brackets) and its port ("": any,
// "PORT" or "LOW-HIGH").
func ParseHostPort(host, port string) (Rule, error) {
	r := Rule{Entry: host}
	if port != "" {
		r.Entry += ":" + port
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
		if name == "" || strings.ContainsAny(name, " */[]:@") {
			return r, fmt.Errorf("%q is no host name, IP address or CIDR prefix", host)
		}
		r.host, r.byName = name, true
	}
	return r, nil
}

func (r *Rule) portOK(port int) bool {
	return r.low == 0 || (port >= r.low && port <= r.high)
}

// AllowsName reports whether a rule allows host by name on port.
func (l *List) AllowsName(host string, port int) bool {
	if l == nil {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for i := range l.Rules {
		r := &l.Rules[i]
		if !r.byName || !r.portOK(port) {
			continue
		}
		if host == r.host || (r.wildSuffix && strings.HasSuffix(host, "."+r.host)) {
			return true
		}
	}
	return false
}

// AllowsIP reports whether an IP rule allows ip:port.
func (l *List) AllowsIP(ip netip.Addr, port int) bool {
	if l == nil {
		return false
	}
	ip = ip.Unmap()
	for i := range l.Rules {
		r := &l.Rules[i]
		if !r.byName && r.portOK(port) && r.prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// metadata are the addresses of cloud metadata services outside
// link-local.
var metadata = [...]netip.Addr{
	netip.AddrFrom16([16]byte{0xfd, 0, 0x0e, 0xc2, 14: 0x02, 15: 0x54}), // fd00:ec2::254
	netip.AddrFrom4([4]byte{100, 100, 100, 200}),
}

// ForbiddenByDefault reports the addresses a partner address chosen at
// run time may not reach unless the operator allows them: loopback,
// link-local (the cloud metadata services, 169.254.169.254), unspecified,
// multicast, and the other metadata addresses.
func ForbiddenByDefault(ip netip.Addr) bool {
	ip = ip.Unmap()
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
