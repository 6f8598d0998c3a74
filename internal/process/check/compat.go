package check

import (
	"fmt"
	"strings"
)

// Compat is a compatibility mode: the engine a bundle was written for,
// whose leniency with static analysis the bundle may rely on. Strict, the
// zero value, is the specification's: every finding refuses the bundle.
type Compat string

// The compatibility modes.
const (
	Strict Compat = ""
	ODE    Compat = "ode" // Apache ODE 1.3 (and WSO2 BPS, RiftSaw: ODE inside)
)

// ParseCompat reads a compatibility mode's name ("ode"; "" or "strict"
// for Strict).
func ParseCompat(s string) (Compat, error) {
	switch strings.TrimSpace(s) {
	case "", "strict":
		return Strict, nil
	case "ode":
		return ODE, nil
	}
	return Strict, fmt.Errorf("unknown compatibility mode %q: want ode or strict", s)
}

// compatSetting names the settings of compatibility mode ODE.
const compatSetting = "deploy with --compat ode or <orchd:compat>ode</orchd:compat>"

// Hint is what ends a finding that compatibility mode ODE would have
// deployed: that ODE did, and the settings; "" for one ODE refused.
func Hint(f *Finding) string {
	if _, ok := ODE.Lenient(f); !ok {
		return ""
	}
	if f.Rule == "SA00043" {
		// ODE's compiler refused the variable="..." forms
		// (AssignGenerator.verifyCopy) and ran the expression forms.
		return "; Apache ODE ran such a copy written as expressions ($a to $b), the parts by name: " + compatSetting
	}
	return "; Apache ODE deployed this: " + compatSetting
}

// odeLenient are the rules Apache ODE 1.3 did not enforce, each with what
// ODE did instead, which is what orchd does under compatibility mode ODE
// (docs/static-analysis.md, column "under --compat ode").
var odeLenient = map[string]string{
	"SA00005": "ODE ignored the portType attribute of an <invoke> (its compiler has no such check); orchd uses the partner link's portType",
	"SA00011": "ODE loaded an imported WSDL by its location and used the document's own targetNamespace",
	"SA00014": "ODE kept one of two differing definitions of a component (its own TestAtomicScopeBasic imports two HelloPortType portTypes that differ in a fault); orchd keeps the last one read",
	"SA00020": "ODE read the alias's messageType and part and ignored an extra type (a messageType alias without part reads the whole message)",
	"SA00021": "ODE's compiler did not look for the alias of every message a correlation set meets; orchd faults bpel:correlationViolation when such a message is sent or received",
	"SA00032": "ODE 1.x took the text of a <to variable> as its query",
	"SA00043": "ODE copied a message as a whole, the source's parts by name; orchd copies each part of the target's message type from the source's part of the same name",
	"SA00046": "ODE applied a correlation without pattern on a request-response <invoke> to the outgoing message",
	"SA00056": "ODE ran the activities before the start activity in the new instance, created by the start message, which the start activity then took",
	"SA00057": "ODE routed each start message on its own correlations",
	"SA00061": "ODE paired a <reply> with its receive by partner link and operation, whatever messageExchange names",
}

// Lenient reports what the engine of mode c did with finding f when it
// did not enforce its rule there; ok is false when it did (or c is
// Strict).
func (c Compat) Lenient(f *Finding) (what string, ok bool) {
	if c != ODE {
		return "", false
	}
	what, ok = odeLenient[f.Rule]
	if ok && f.Rule == "SA00005" && elementTag(f) != "invoke" {
		// ODE's compiler refused a portType of receive, reply and
		// onMessage that is not the partner link's (errPortTypeMismatch).
		return "", false
	}
	return what, ok
}

// elementTag is the local name of the element f is about.
func elementTag(f *Finding) string {
	tag, _, _ := strings.Cut(f.Element, " ")
	if _, local, ok := strings.Cut(tag, ":"); ok {
		return local
	}
	return tag
}

// LenientRules are the rules of Rules that compatibility mode ODE turns
// into warnings, in order.
func LenientRules() []string {
	var out []string
	for _, r := range Rules() {
		if _, ok := odeLenient[r.ID]; ok {
			out = append(out, r.ID)
		}
	}
	return out
}

// String is the mode's name, for flags ("strict" for Strict).
func (c Compat) String() string {
	if c == Strict {
		return "strict"
	}
	return string(c)
}

// Set reads a --compat flag (flag.Value).
func (c *Compat) Set(s string) error {
	m, err := ParseCompat(s)
	if err != nil {
		return err
	}
	*c = m
	return nil
}

// CompatUsage is the --compat flag's usage, shared by serve and lint.
const CompatUsage = "compatibility `mode` of every bundle: ode deploys and runs processes as Apache ODE 1.3 (and WSO2 BPS) did, the static analysis rules ODE did not enforce as warnings (docs/static-analysis.md); strict refuses them; a process's <orchd:compat> in deploy.xml wins"
