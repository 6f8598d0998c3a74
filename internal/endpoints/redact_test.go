package endpoints

import (
	"strings"
	"testing"
)

// TestParseRedactsMalformedAddress: an override address that does not
// parse, or is no http(s) URL, is refused with an error that does not
// quote its password.
func TestParseRedactsMalformedAddress(t *testing.T) {
	for _, addr := range []string{
		"http://bob:pw-E1x@127.0.0.1:notaport/p",
		"http://bob:pw-E1x@127.0.0.1:9/p%zz",
		"http://bob:pw-E1x@127.0.0.1:9/p\x7f",
		"bob:pw-E1x@127.0.0.1:9/p",
	} {
		_, err := Parse("endpoints.txt", strings.NewReader("portType {http://ns}PT "+addr+"\n"))
		if err == nil {
			t.Errorf("%q: accepted", addr)
			continue
		}
		if strings.Contains(err.Error(), "pw-E1x") {
			t.Errorf("%q: the error shows the password: %v", addr, err)
		}
	}
}
