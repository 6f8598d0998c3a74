package xpath2

import (
	"strings"
	"testing"
)

// TestUnknownFunctionMessage: an unknown function's XPST0017 names the
// closest known one, and a known function called with the wrong number
// of arguments says how many it takes.
func TestUnknownFunctionMessage(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"concatt('a', 'b')", "unknown function concatt#2; did you mean concat?"},
		{"uper-case('a')", "unknown function uper-case#1; did you mean upper-case?"},
		{"fn:zzzzzz()", "unknown function fn:zzzzzz#0"},
		{"substring('abc')", "function substring takes 2 to 3 arguments, not 1"},
	} {
		_, err := Compile(tc.expr, &StaticContext{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", tc.expr, err, tc.want)
		}
		if strings.Contains(err.Error(), "did you mean") && !strings.Contains(tc.want, "did you mean") {
			t.Errorf("%s: %v suggests a name nothing is close to", tc.expr, err)
		}
	}
}
