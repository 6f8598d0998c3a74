package process

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
)

// TestPartnerDeploySettings reads deploy.xml's orchd:timeout and
// orchd:basicAuth of rt-invoke's partner link: good settings reach the
// partner call, bad ones are deploy errors naming deploy.xml and line.
func TestPartnerDeploySettings(t *testing.T) {
	t.Setenv("ORCHD_TEST_PW", "from-env")
	tests := []struct {
		name     string
		settings string            // children of <invoke partnerLink="partner">, after <service>
		files    map[string]string // more files of the bundle
		errs     []string
		timeout  time.Duration // of the call of operation call
		user, pw string
	}{
		{name: "operation timeout", settings: `<orchd:timeout operation="call">PT2S</orchd:timeout><orchd:timeout>PT9S</orchd:timeout>`, timeout: 2 * time.Second},
		{name: "link timeout", settings: `<orchd:timeout operation="notify">PT2S</orchd:timeout><orchd:timeout>PT1M</orchd:timeout>`, timeout: time.Minute},
		{name: "no timeout", timeout: 0},
		// Past the longest time.Duration the timeout saturates: it does
		// not wrap to 0.29s (2^64 ns) or a negative one.
		{name: "timeout past the range", settings: `<orchd:timeout>PT18446744074S</orchd:timeout>`, timeout: time.Duration(math.MaxInt64)},
		{name: "bad duration", settings: `<orchd:timeout operation="call">2s</orchd:timeout>`, errs: []string{"deploy.xml:10", "orchd:timeout", `want a positive xsd:duration such as PT5M, not "2s"`}},
		{name: "zero duration", settings: `<orchd:timeout>PT0S</orchd:timeout>`, errs: []string{"deploy.xml:10", "orchd:timeout", `"PT0S"`}},
		{name: "unknown operation", settings: `<orchd:timeout operation="dance">PT1S</orchd:timeout>`, errs: []string{"deploy.xml:10", `partnerLink "partner" has no operation "dance"`}},
		{name: "password file", settings: `<orchd:basicAuth user="u" passwordFile="secret/pw.txt"/>`, files: map[string]string{"secret/pw.txt": "p4ss\n"}, user: "u", pw: "p4ss"},
		{name: "password env", settings: `<orchd:basicAuth user="u" passwordEnv="ORCHD_TEST_PW"/>`, user: "u", pw: "from-env"},
		{name: "missing password file", settings: `<orchd:basicAuth user="u" passwordFile="nope.txt"/>`, errs: []string{"deploy.xml:10", "orchd:basicAuth", "passwordFile", "nope.txt"}},
		{name: "password file outside the bundle", settings: `<orchd:basicAuth user="u" passwordFile="../pw.txt"/>`, errs: []string{"deploy.xml:10", `passwordFile "../pw.txt" must be a path inside the bundle`}},
		{name: "unset env", settings: `<orchd:basicAuth user="u" passwordEnv="ORCHD_TEST_NOT_SET"/>`, errs: []string{"deploy.xml:10", "environment variable ORCHD_TEST_NOT_SET is not set"}},
		{name: "no user, two sources", settings: `<orchd:basicAuth passwordFile="a" passwordEnv="B"/>`, errs: []string{"deploy.xml:10", "needs a user", "needs one of passwordFile"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The settings go on line 10, after the <service> of line 10.
			dir := rtInvokeWith(t, "", tc.settings)
			for name, content := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			procs, err := loadBundle(dir)
			if tc.errs != nil {
				checkDeployError(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got *exchange.Call
			var ep *exchange.Endpoint
			e := NewEngine(Options{Partners: func(p *exchange.Endpoint) exchange.Partner {
				ep = p
				return exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
					got = c
					return partnerAnswer(c)
				})
			}})
			if err := e.Deploy(procs...); err != nil {
				t.Fatal(err)
			}
			if r := dispatch(t, e, procs[0], testReq("S-1", "1", "")); r.err != nil {
				t.Fatal(r.err)
			}
			if got == nil || got.Timeout != tc.timeout {
				t.Errorf("call %+v, want timeout %s", got, tc.timeout)
			}
			switch a := ep.BasicAuth; {
			case tc.user == "" && a != nil:
				t.Errorf("basic auth %+v, want none", a)
			case tc.user != "" && (a == nil || a.User != tc.user || string(a.Password) != tc.pw):
				t.Errorf("basic auth %+v, want %s", a, tc.user)
			}
		})
	}
}
