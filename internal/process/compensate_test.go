package process

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/plan"
)

// minimalReply is good-minimal's reply, on line 30: the cases put their
// activities right before it.
const minimalReply = `    <reply partnerLink="client" operation="run" variable="out"/>`

// compensationProcess is good-minimal with scopes that use every
// compensation and termination construct.
const compensationSnippet = `<scope name="outer">
<faultHandlers><catchAll><sequence><compensateScope target="A"/><compensateScope target="inv"/><compensate/></sequence></catchAll></faultHandlers>
<terminationHandler><compensate/></terminationHandler>
<sequence>
<scope name="A"><variables><variable name="x" type="xsd:string"/></variables>
<compensationHandler><sequence><compensate/><assign><copy><from>$x</from><to>$out.payload/tns:a</to></copy></assign></sequence></compensationHandler>
<scope name="inner"><compensationHandler><empty/></compensationHandler><empty/></scope>
</scope>
<invoke name="inv" partnerLink="partner" operation="call" inputVariable="in" outputVariable="out"><compensationHandler><empty/></compensationHandler></invoke>
</sequence>
</scope>`

// Bad compensation constructs are refused at deploy naming file, line
// and element; good ones compile.
func TestCompensationCompile(t *testing.T) {
	tests := []struct {
		name    string
		snippet string // one element per line, from line 30
		line    int    // of the problem, 0 when it compiles
		want    string
	}{
		{name: "every construct", snippet: compensationSnippet},
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
	dir := editedBundle(t, "good-minimal", map[string][]string{"Test.bpel": {minimalReply, compensationSnippet + "\n" + minimalReply}})
	procs, err := loadBundle(dir)
	if err != nil || len(procs) != 1 {
		t.Fatalf("LoadBundle: %v", err)
	}
	return procs[0]
}

// recInstance is an instance of p whose process scope frame holds two
// completed instances of A (each with a snapshot of x and a completed
// inner), as a checkpoint taken after them would.
func recInstance(p *interp.Version) *interp.Instance {
	in := interp.NewInstance(nil, p, context.Background())
	var a, inner *plan.Scope
	for _, act := range p.Acts {
		if s, ok := act.(*plan.Scope); ok && s.Name == "A" {
			a = s
		} else if ok && s.Name == "inner" {
			inner = s
		}
	}
	snap := func(v string) []interp.PrivSlot {
		el := a.Vars[0].NewSlot()
		el.SetText(v)
		return []interp.PrivSlot{{Slot: a.Vars[0].Slot, El: el}}
	}
	top := &interp.CompRec{}
	for _, v := range []string{"first", "second"} {
		top.Kids = append(top.Kids, &interp.CompRec{Sc: a, Snap: snap(v), Kids: []*interp.CompRec{{Sc: inner}}})
	}
	in.Threads[0].Stack = append(in.Threads[0].Stack, interp.Frame{Act: p.Root, Pc: interp.ScopeBody, Rec: top})
	return in
}

// describeRec renders a record tree for comparison.
func describeRec(r *interp.CompRec) string {
	if r == nil {
		return "nil"
	}
	var b strings.Builder
	if r.Sc != nil {
		b.WriteString(r.Sc.Name)
	}
	for _, ps := range r.Snap {
		var w strings.Builder
		ps.El.WriteTo(&w, &etree.WriteSettings{})
		b.WriteString(" " + strconv.Itoa(ps.Slot) + "=" + w.String())
	}
	b.WriteString("[")
	for _, k := range r.Kids {
		b.WriteString(describeRec(k) + ";")
	}
	return b.String() + "]"
}

// Completed scope instances and their snapshots survive a checkpoint:
// written as frames version 4, read back the same.
func TestCompensationRecordsRoundTrip(t *testing.T) {
	p := compensationProc(t)
	in := recInstance(p)
	b, err := in.EncodeFrames(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	fp, b, ok := interp.SplitFingerprint(b)
	if !ok || fp != p.Fingerprint {
		t.Fatalf("frames start with fingerprint %q (%v), want %q", fp, ok, p.Fingerprint)
	}
	if b[0] != interp.FramesVersionComp {
		t.Fatalf("frames version %d, want %d", b[0], interp.FramesVersionComp)
	}
	out := interp.NewInstance(nil, p, context.Background())
	if err := out.DecodeThreads(interp.NewReader(b[1:]), true); err != nil {
		t.Fatal(err)
	}
	want := describeRec(in.Threads[0].Stack[0].Rec)
	if got := describeRec(out.Threads[0].Stack[0].Rec); got != want || !strings.Contains(got, ">second<") {
		t.Errorf("records read back\n%s\nwant\n%s", got, want)
	}
	// An instance with no record is written as before (version 2).
	in.Threads[0].Stack[0].Rec = nil
	b, _ = in.EncodeFrames(nil, 0)
	if _, b, _ = interp.SplitFingerprint(b); b[0] != interp.FramesVersion {
		t.Errorf("frames version %d without records, want %d", b[0], interp.FramesVersion)
	}
}

// FuzzDecodeCompFrames feeds stored control state with compensation
// records to the decoder: it must fail cleanly, never panic.
func FuzzDecodeCompFrames(f *testing.F) {
	p := compensationProc(f)
	b, err := recInstance(p).EncodeFrames(nil, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[1:])
	f.Add([]byte{1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := interp.NewInstance(nil, p, context.Background())
		_ = in.DecodeThreads(interp.NewReader(data), true)
	})
}

// FuzzDecodeFrames feeds a stored instance's control state and a stored
// variable to the checkpoint decoder, as a load or a listing reads them:
// it fails cleanly (a broken instance), never panics.
func FuzzDecodeFrames(f *testing.F) {
	p := compensationProc(f)
	for _, in := range []*interp.Instance{recInstance(p), interp.NewInstance(nil, p, context.Background())} {
		b, err := in.EncodeFrames([]string{"route"}, 42)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte("<v><x a='1'/></v>"))
		f.Add(b[:len(b)/2], []byte("<v"))
	}
	f.Fuzz(func(t *testing.T, frames, variable []byte) {
		rec := &persist.Instance{ID: "x", Process: p.Name.String(), State: persist.Waiting, Frames: frames}
		if err := checkStored(p, rec, map[int][]byte{1: variable}); err != nil && !isCorrupt(err) {
			t.Fatalf("checkStored: %v is not a decoding error", err)
		}
	})
}
