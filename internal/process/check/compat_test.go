package check

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The modes parse by name; ODE is lenient exactly with the rules of its
// table, each a rule Check checks, and Strict with none; the hint names
// the setting only for those rules.
func TestCompat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Compat
		err  string
	}{
		{in: "", want: Strict}, {in: "strict", want: Strict}, {in: "ode", want: ODE}, {in: " ode ", want: ODE},
		{in: "ODE", err: `unknown compatibility mode "ODE"`}, {in: "bpel-g", err: "want ode or strict"},
	} {
		got, err := ParseCompat(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCompat(%q) = %v, want error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseCompat(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	checked := map[string]bool{}
	for _, r := range Rules() {
		checked[r.ID] = true
	}
	for id := range odeLenient {
		if !checked[id] {
			t.Errorf("compat ode table names %s, which Check does not check", id)
		}
	}
	if len(LenientRules()) != len(odeLenient) {
		t.Errorf("LenientRules() = %v, want the %d rules of the table", LenientRules(), len(odeLenient))
	}
	for _, r := range Rules() {
		f := &Finding{Rule: r.ID, Element: `bpel:invoke name="x"`}
		what, lenient := ODE.Lenient(f)
		if _, strict := Strict.Lenient(f); strict {
			t.Errorf("Strict is lenient with %s", r.ID)
		}
		hint := Hint(f)
		if lenient != (hint != "") || lenient != (what != "") {
			t.Errorf("%s: lenient %v, what %q, hint %q", r.ID, lenient, what, hint)
		}
		if lenient && !strings.Contains(hint, "deploy with --compat ode or <orchd:compat>ode</orchd:compat>") {
			t.Errorf("%s: hint %q does not name the setting", r.ID, hint)
		}
	}
}

// ODE ignored the portType of an invoke, and refused a wrong one on the
// activities that receive (PickReceiveGenerator).
func TestCompatPortType(t *testing.T) {
	for _, tc := range []struct {
		element string
		lenient bool
	}{
		{`invoke name="a"`, true}, {`bpel:invoke partnerLink="p"`, true}, {"invoke", true},
		{`receive name="r"`, false}, {`bpel:onMessage partnerLink="p"`, false}, {`reply name="r"`, false},
	} {
		_, got := ODE.Lenient(&Finding{Rule: "SA00005", Element: tc.element})
		if got != tc.lenient {
			t.Errorf("SA00005 at <%s>: lenient %v, want %v", tc.element, got, tc.lenient)
		}
	}
}

// docs/static-analysis.md's column "under --compat ode" says "warning"
// exactly for the rules compatibility mode ODE is lenient with.
func TestDocsCompatColumn(t *testing.T) {
	data, err := os.ReadFile("../../../docs/static-analysis.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (SA\d{5}) \|(?:[^|]*\|){3} ([^|]*) \|$`)
	rows := 0
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		rows++
		_, lenient := odeLenient[m[1]]
		if got := strings.HasPrefix(m[2], "warning"); got != lenient {
			t.Errorf("docs/static-analysis.md: %s under --compat ode says %q; check.ODE is lenient with it: %v", m[1], m[2], lenient)
		}
	}
	if rows != 95 {
		t.Errorf("docs/static-analysis.md: %d rows with a --compat ode column, want 95", rows)
	}
}
