package epr

import (
	"strings"
	"testing"
)

// TestEPRTextRedactsMalformedAddress: an endpoint reference a process
// assigns whose address does not parse, or is no http(s) URL, is refused
// with an error that does not quote its password.
func TestEPRTextRedactsMalformedAddress(t *testing.T) {
	for _, addr := range []string{
		"http://bob:pw-E2x@127.0.0.1:notaport/p",
		"http://bob:pw-E2x@127.0.0.1:9/p%zz",
		"http://bob:pw-E2x@bad host:9/p",
		"http://bob:pw-E2x@127.0.0.1:9/p\x7f",
		"bob:pw-E2x@127.0.0.1:9/p",
	} {
		_, err := CheckAddress(addr)
		if err == nil {
			t.Errorf("%q: accepted", addr)
			continue
		}
		if strings.Contains(err.Error(), "pw-E2x") {
			t.Errorf("%q: the error shows the password: %v", addr, err)
		}
	}
}
