package soap

import (
	"strings"
	"testing"
)

// TestCallbackAddressRedacted: a wsa:ReplyTo or FaultTo address that
// does not parse, or is no http(s) URL, is refused with a client fault
// that does not quote its password.
func TestCallbackAddressRedacted(t *testing.T) {
	for _, addr := range []string{
		"http://bob:pw-E3x@127.0.0.1:notaport/p",
		"http://bob:pw-E3x@127.0.0.1:9/p%zz",
		"http://bob:pw-E3x@bad host:9/p",
		"bob:pw-E3x@127.0.0.1:9/p",
	} {
		err := callbackAddress(addr)
		if err == nil {
			t.Errorf("%q: accepted", addr)
			continue
		}
		if strings.Contains(err.Error(), "pw-E3x") {
			t.Errorf("%q: the fault shows the password: %v", addr, err)
		}
	}
}
