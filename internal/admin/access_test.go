package admin

import (
	"net"
	"testing"
)

// addr is a net.Addr of a listener bound to s, as ln.Addr() prints it.
type addr string

func (a addr) Network() string { return "tcp" }
func (a addr) String() string  { return string(a) }

// TestExposed is the one rule for the API on a network, whichever flag
// opened the listener: off without a token unless the listener is
// loopback; on with either token everywhere.
func TestExposed(t *testing.T) {
	const tok, readTok = "admin-token-0123456789", "read-token-0123456789"
	tests := []struct {
		addr     net.Addr
		loopback bool
	}{
		{addr: addr("127.0.0.1:8080"), loopback: true},
		{addr: addr("127.0.0.2:8080"), loopback: true},
		{addr: addr("[::1]:8080"), loopback: true},
		{addr: addr("[::ffff:127.0.0.1]:8080"), loopback: true},
		{addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, loopback: true},
		{addr: addr("0.0.0.0:8080")},
		{addr: addr("[::]:8080")},
		{addr: &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}},
		{addr: addr("192.0.2.2:8080")},
		{addr: addr("10.0.0.1:8080")},
		{addr: addr("[fd00::1]:8080")},
		{addr: addr("[fe80::1%eth0]:8080")},
		{addr: addr("localhost:8080")}, // a name may resolve to anything
		{addr: addr("orchd.internal:8080")},
	}
	for _, tc := range tests {
		t.Run(tc.addr.String(), func(t *testing.T) {
			if got := Exposed(tc.addr, "", ""); got == tc.loopback {
				t.Errorf("no token: Exposed = %v, want %v", got, !tc.loopback)
			}
			for _, toks := range [][2]string{{tok, ""}, {"", readTok}, {tok, readTok}} {
				if Exposed(tc.addr, toks[0], toks[1]) {
					t.Errorf("tokens %q: exposed, want the API on", toks)
				}
			}
			a := ListenerAccess(tc.addr, "", "", nil)
			if (a.Off != "") == tc.loopback {
				t.Errorf("ListenerAccess without a token: Off %q, loopback %v", a.Off, tc.loopback)
			}
			if a := ListenerAccess(tc.addr, tok, "", nil); a.Off != "" || a.Token != tok {
				t.Errorf("ListenerAccess with a token: %+v", a)
			}
		})
	}
}
