package compile

import (
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/check"
)

// Compatibility mode ODE, from the options (serve --compat ode) or from
// deploy.xml's orchd:compat (which wins), deploys a finding of a rule ODE
// did not enforce as a warning; strict refuses it naming the setting; an
// unknown mode is refused with its line.
func TestCompat(t *testing.T) {
	const hint = "Apache ODE deployed this: deploy with --compat ode or <orchd:compat>ode</orchd:compat>"
	tests := []struct {
		name, extra string
		opts        LoadOptions
		err         string // "" to deploy, with the finding as a warning
	}{
		{name: "strict", err: "SA00011: "},
		{name: "strict names the setting", err: hint},
		{name: "options", opts: LoadOptions{Compat: check.ODE}},
		{name: "deploy.xml", extra: `<orchd:compat>ode</orchd:compat>`},
		{name: "deploy.xml strict wins", extra: `<orchd:compat>strict</orchd:compat>`, opts: LoadOptions{Compat: check.ODE}, err: hint},
		{name: "deploy.xml ode wins", extra: `<orchd:compat> ode </orchd:compat>`, opts: LoadOptions{Compat: check.Strict}},
		{name: "unknown", extra: `<orchd:compat>ode13</orchd:compat>`, opts: LoadOptions{Compat: check.ODE},
			err: `deploy.xml:14: <orchd:compat>: unknown compatibility mode "ode13": want ode`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := loadWaiveBundle(t, tc.extra, tc.opts, tc.err)
			if tc.err == "" && (len(w) == 0 || !strings.HasPrefix(w[0], "compat ode: PurchaseOrder.bpel:40: <import") ||
				!strings.Contains(w[0], "SA00011") || !strings.Contains(w[0], "targetNamespace")) {
				t.Fatalf("warnings %q, want the SA00011 finding first, with what ODE did", w)
			}
		})
	}
}
