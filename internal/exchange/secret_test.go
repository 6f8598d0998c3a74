package exchange

import (
	"fmt"
	"strings"
	"testing"
)

// A password in an endpoint never shows in formatted output.
func TestSecretNotPrinted(t *testing.T) {
	ep := &Endpoint{Address: "http://crm", BasicAuth: &BasicAuth{User: "u", Password: "hunter2"}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		if s := fmt.Sprintf(verb, *ep.BasicAuth); strings.Contains(s, "hunter2") || !strings.Contains(s, "[redacted]") {
			t.Errorf("%s of the credentials: %s", verb, s)
		}
	}
}
