package process

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/plan"
)

// minimalReply is good-minimal's reply, on line 30: the cases put their
// activities right before it.
const minimalReply = `    <reply partnerLink="client" operation="run" variable="out"/>`

// compensationSnippet is testdata/compensation-snippet.xml: scopes that
// use every compensation and termination construct (the interpreter's
// frames tests run them too).
func compensationSnippet(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/compensation-snippet.xml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// Bad compensation constructs are refused at deploy naming file, line
// and element; good ones compile.
func TestCompensationCompile(t *testing.T) {
	tests := []struct {
		name    string
		snippet string // one element per line, from line 30
		line    int    // of the problem, 0 when it compiles
		want    string
	}{
		{name: "every construct", snippet: compensationSnippet(t)},
		{name: "compensate in a scope's body", snippet: `<scope>
<compensate/>
</scope>`, line: 31, want: "<compensate>: SA00008: <compensate> may only be used in a fault, compensation or termination handler"},
		{name: "compensateScope in the process body", snippet: `<compensateScope target="A"/>`, line: 30, want: `<compensateScope target="A">: SA00007: <compensateScope> may only be used`},
		{name: "unknown target", snippet: `<scope>
<faultHandlers><catchAll>
<compensateScope target="nope"/>
</catchAll></faultHandlers>
<scope name="A"><compensationHandler><empty/></compensationHandler><empty/></scope>
</scope>`, line: 32, want: `<compensateScope target="nope">: SA00077: target "nope" is not a scope immediately enclosed`},
		{name: "target nested deeper", snippet: `<scope>
<faultHandlers><catchAll>
<compensateScope target="deep"/>
</catchAll></faultHandlers>
<scope name="A"><scope name="deep"><compensationHandler><empty/></compensationHandler><empty/></scope></scope>
</scope>`, line: 32, want: `SA00077: target "deep" is not a scope immediately enclosed`},
		{name: "compensate in a scope inside a handler", snippet: `<scope>
<faultHandlers><catchAll><scope>
<compensate/>
</scope></catchAll></faultHandlers>
<empty/>
</scope>`, line: 32, want: "<compensate> may only be used"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			loadSnippet(t, minimalReply, tc.snippet, tc.line, tc.want)
		})
	}
}

// What the compiler decides: only scopes that can be compensated record
// their completion, and a process without compensation gets nothing
// (the purchase order pays nothing, and its activity numbers, which its
// checkpoints name, stay as they were).
func TestCompensationPlan(t *testing.T) {
	ps, err := loadBundle("../../deploy/purchase-order")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Comp != nil {
			t.Errorf("%s: compensation support compiled into a process without compensation", p.Name.Local)
		}
		for _, a := range p.Acts {
			if s, ok := a.(*plan.Scope); ok && (s.Compensable || s.DefaultFH || s.SubTerm) {
				t.Errorf("%s: scope at %s records or handles compensation", p.Name.Local, s.Pos)
			}
		}
	}
	p := compensationProc(t)
	byName := map[string]*plan.Scope{}
	for _, a := range p.Acts {
		if s, ok := a.(*plan.Scope); ok {
			byName[s.Name] = s
		}
	}
	for _, c := range []struct {
		name                                       string
		compensable, termNeeded, defaultFH, hasKid bool
	}{
		{"outer", true, true, true, true},
		{"A", true, true, true, true},
		{"inner", true, false, false, false},
		{"inv", true, false, false, false},
	} {
		s := byName[c.name]
		if s == nil {
			t.Fatalf("no scope %s", c.name)
		}
		if s.Compensable != c.compensable || s.TermNeeded != c.termNeeded || s.DefaultFH != c.defaultFH || s.HasCompKids != c.hasKid {
			t.Errorf("scope %s: compensable %v termNeeded %v defaultFH %v hasCompKids %v, want %+v", c.name, s.Compensable, s.TermNeeded, s.DefaultFH, s.HasCompKids, c)
		}
	}
	if !p.Root.(*plan.Scope).DefaultFH || p.Root.(*plan.Scope).Compensable {
		t.Error("the process scope: want the default fault handler and no record of its own")
	}
}

// loadSnippet loads good-minimal with snippet put before marker (a
// line of Test.bpel). With line 0 it must compile (its processes are
// returned); else it must be refused at that line with want.
func loadSnippet(t *testing.T, marker, snippet string, line int, want string) []*interp.Version {
	t.Helper()
	dir := editedBundle(t, "good-minimal", map[string][]string{"Test.bpel": {marker, snippet + "\n" + marker}})
	procs, err := loadBundle(dir)
	if line == 0 {
		if err != nil || len(procs) != 1 {
			t.Fatalf("LoadBundle: %v", err)
		}
		return procs
	}
	if err == nil {
		t.Fatal("deployed, want an error")
	}
	at := "Test.bpel:" + strconv.Itoa(line) + ":"
	if !strings.Contains(err.Error(), at) || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want %q and %q", err, at, want)
	}
	return nil
}

func compensationProc(t testing.TB) *interp.Version {
	t.Helper()
	dir := editedBundle(t, "good-minimal", map[string][]string{"Test.bpel": {minimalReply, compensationSnippet(t) + "\n" + minimalReply}})
	procs, err := loadBundle(dir)
	if err != nil || len(procs) != 1 {
		t.Fatalf("LoadBundle: %v", err)
	}
	return procs[0]
}
