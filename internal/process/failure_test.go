package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/orchd/orchd/internal/exchange"
)

// TestFailurePolicy drives rt-invoke with a partner that fails a number of
// times, under ODE's failureHandling written in deploy.xml.
func TestFailurePolicy(t *testing.T) {
	tests := []struct {
		name     string
		policy   string // ext:failureHandling children; "" for none
		failures int32
		wantOK   bool
		wantErr  string
		calls    int32
	}{
		{name: "no policy: an in-memory instance throws activityFailure", failures: 1, wantErr: "{http://ode.apache.org/activityRecovery}activityFailure: invoke partner.call", calls: 1},
		{name: "retries exhausted without faultOnFailure: still activityFailure", policy: "<ext:retryFor>1</ext:retryFor><ext:retryDelay>0</ext:retryDelay>", failures: 5, wantErr: "partner down", calls: 2},
		{name: "retried until it works", policy: "<ext:retryFor>2</ext:retryFor><ext:retryDelay>0</ext:retryDelay>", failures: 2, wantOK: true, calls: 3},
		{name: "retries exhausted, then activityFailure", policy: "<ext:retryFor>1</ext:retryFor><ext:retryDelay>0</ext:retryDelay><ext:faultOnFailure>true</ext:faultOnFailure>", failures: 5, wantErr: "{http://ode.apache.org/activityRecovery}activityFailure", calls: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rt-invoke")
			copyDir(t, filepath.Join(bundlesDir, "rt-invoke"), dir)
			if tc.policy != "" {
				dd := filepath.Join(dir, "deploy.xml")
				b, _ := os.ReadFile(dd)
				s := strings.Replace(string(b), `<service name="tns:PartnerService" port="PartnerPort"/>`,
					`<service name="tns:PartnerService" port="PartnerPort"/><ext:failureHandling xmlns:ext="http://ode.apache.org/activityRecovery">`+tc.policy+`</ext:failureHandling>`, 1)
				if err := os.WriteFile(dd, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			procs, err := loadBundle(dir)
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			e := NewEngine(Options{Partners: func(*exchange.Endpoint) exchange.Partner {
				return exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
					if calls.Add(1) <= tc.failures {
						return nil, errors.New("partner down")
					}
					return partnerAnswer(c)
				})
			}})
			if err := e.Deploy(procs...); err != nil {
				t.Fatal(err)
			}
			r := dispatch(t, e, procs[0], testReq("F-1", "1", ""))
			out, err := r.out, r.err
			if tc.wantOK && (err != nil || out == nil || childText(out.Part("payload"), "a") != "ok:P-F-1") {
				t.Errorf("want the reply, got %v, %v", out, err)
			}
			if tc.wantErr != "" {
				// A system failure is an error; a fault is answered as one.
				got := ""
				if err != nil {
					got = err.Error()
				} else if r.fault != nil {
					got = r.fault.Name.String() + ": " + r.fault.Reason
				}
				if !strings.Contains(got, tc.wantErr) {
					t.Errorf("answer %q, want one naming %q", got, tc.wantErr)
				}
			}
			if n := calls.Load(); n != tc.calls {
				t.Errorf("%d calls, want %d", n, tc.calls)
			}
		})
	}
}
