package process

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/interp"
)

// walk calls f on every node of the outline under a, a included.
func walk(a *mgmt.Activity, f func(*mgmt.Activity)) {
	f(a)
	for _, c := range a.Children {
		walk(c, f)
	}
}

func TestOutlineSampling(t *testing.T) {
	const runs = 20
	tests := []struct {
		name                     string
		sampleEvery, sampleFirst int
		wantSampled              uint64 // instances timed of runs
	}{
		{"every instance", 1, 0, runs},
		{"the first 16, then one in four", 4, 0, SampleFirst + 1},
		{"default: the first 16, then one in 64", 0, 0, SampleFirst},
		{"one in four, no first", 4, -1, runs / 4},
		{"the first 3 only", 64, 3, 3},
		{"off", -1, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			procs, err := loadBundle(exampleBundle)
			if err != nil {
				t.Fatal(err)
			}
			ip := &inProcessPartners{}
			e := NewEngine(Options{Partners: ip.bind, SampleEvery: tc.sampleEvery, SampleFirst: tc.sampleFirst})
			if err := e.Deploy(procs...); err != nil {
				t.Fatal(err)
			}
			p := procs[0]
			payload := poMessage(t, "po-request.xml")
			for i := 0; i < runs; i++ {
				if _, f, err := submit(t, e, p, payload.Copy()); err != nil || f != nil {
					t.Fatalf("run %d: %v %v", i, f, err)
				}
			}
			got, err := e.Version(p.Name.Local, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.Stats.Started != runs || got.Stats.Completed != runs || got.Stats.Exchanges != runs {
				t.Errorf("stats: %+v", got.Stats)
			}
			o := got.Outline
			if o == nil || o.Kind != "process" || o.Name != "PurchaseOrder" || !strings.HasPrefix(o.Position, "PurchaseOrder.bpel:") {
				t.Fatalf("outline root: %+v", o)
			}
			if o.Count != tc.wantSampled || (o.Count > 0 && (o.Nanos == 0 || o.P99Nanos == 0)) {
				t.Errorf("process node counted %d instances (%d ns), want %d", o.Count, o.Nanos, tc.wantSampled)
			}
			kinds := map[string]int{}
			walk(o, func(a *mgmt.Activity) {
				kinds[a.Kind]++
				if a.Kind == "" || !strings.Contains(a.Position, ".bpel:") {
					t.Errorf("outline node without kind or position: %+v", a)
				}
				// Its id is the plan's (the diagram's data-activity).
				if a.ID < 0 || a.ID >= len(p.Acts) || p.Acts[a.ID].Where().String() != a.Position {
					t.Errorf("%s %s at %s: id %d is not its plan activity", a.Kind, a.Name, a.Position, a.ID)
				}
				// The PO receives once and calls each partner once per
				// instance (other activities are on branches, in a loop
				// or in fault handlers).
				if (a.Kind == "receive" || a.Kind == "invoke") && a.Count != tc.wantSampled {
					t.Errorf("%s %s at %s: count %d, want %d", a.Kind, a.Name, a.Position, a.Count, tc.wantSampled)
				}
				if a.Count > tc.wantSampled*8 || (a.Count == 0 && a.Nanos != 0) {
					t.Errorf("%s %s: %d ns for %d runs", a.Kind, a.Name, a.Nanos, a.Count)
				}
				var sum uint64
				for _, c := range a.Children {
					sum += c.Nanos
				}
				if a.Kind == "sequence" && a.Nanos < sum {
					t.Errorf("sequence %s at %s: %d ns, its children %d ns", a.Name, a.Position, a.Nanos, sum)
				}
			})
			for _, k := range []string{"receive", "invoke", "reply", "assign"} {
				if kinds[k] == 0 {
					t.Errorf("no %s in the outline: %v", k, kinds)
				}
			}
		})
	}
}

func TestVersionsAndSetActive(t *testing.T) {
	load := func(v int) *interp.Version {
		procs, err := loadBundle(exampleBundle)
		if err != nil {
			t.Fatal(err)
		}
		procs[0].Number, procs[0].Bundle = v, "po"
		return procs[0]
	}
	e := NewEngine(Options{})
	v1, v2 := load(1), load(2)
	if err := e.Deploy(v1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Redeploy(func(b string) bool { return b == "po" }, v2); err != nil {
		t.Fatal(err)
	}
	states := func() string {
		var s []string
		for _, p := range e.Versions() {
			s = append(s, p.Local+"/"+strings.Repeat("v", p.Version)+":"+p.State)
		}
		return strings.Join(s, " ")
	}
	if got := states(); got != "PurchaseOrder/vv:active PurchaseOrder/v:retired" {
		t.Fatalf("after the redeploy: %s", got)
	}
	steps := []struct {
		version     int
		active      bool
		wantOn      *interp.Version
		wantRetired []*interp.Version
		states      string
	}{
		{1, true, v1, []*interp.Version{v2}, "PurchaseOrder/vv:retired PurchaseOrder/v:active"},
		{1, true, v1, nil, "PurchaseOrder/vv:retired PurchaseOrder/v:active"},
		{0, false, nil, []*interp.Version{v1}, "PurchaseOrder/vv:retired PurchaseOrder/v:retired"},
		{1, false, nil, nil, "PurchaseOrder/vv:retired PurchaseOrder/v:retired"},
		{0, true, v2, nil, "PurchaseOrder/vv:active PurchaseOrder/v:retired"}, // 0: the newest
	}
	for i, st := range steps {
		on, gone, err := e.SetActive(t.Context(), "PurchaseOrder", st.version, st.active)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if on != st.wantOn || len(gone) != len(st.wantRetired) || (len(gone) == 1 && gone[0] != st.wantRetired[0]) {
			t.Errorf("step %d: activated %v, retired %v", i, on, gone)
		}
		if got := states(); got != st.states {
			t.Errorf("step %d: %s, want %s", i, got, st.states)
		}
		served := e.served.Load()
		for ep, p := range *served {
			if (p == v1) != strings.HasSuffix(st.states, "v:active") || (p == v2) != strings.Contains(st.states, "vv:active") {
				t.Errorf("step %d: %s served by version %d", i, ep.Path, p.Number)
			}
		}
	}
}

// PlanOf finds a version by its fingerprint, active or retired, whatever
// its number here: an instance's diagram names its version so, because
// another node may number the same version otherwise.
func TestPlanOf(t *testing.T) {
	load := func(dir string, v int) *interp.Version {
		procs, err := loadBundle(dir)
		if err != nil {
			t.Fatal(err)
		}
		procs[0].Number, procs[0].Bundle = v, "po"
		return procs[0]
	}
	edited := filepath.Join(t.TempDir(), "po")
	copyDir(t, exampleBundle, edited)
	b, err := os.ReadFile(filepath.Join(edited, "PurchaseOrder.bpel"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(edited, "PurchaseOrder.bpel"), append(b, "<!-- version 2 -->\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	v1, v2 := load(exampleBundle, 1), load(edited, 2)
	if v1.Fingerprint == v2.Fingerprint {
		t.Fatal("the edited process has the first one's fingerprint")
	}
	e := NewEngine(Options{})
	if err := e.Deploy(v1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Redeploy(func(b string) bool { return b == "po" }, v2); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*interp.Version{v1, v2} {
		pl, n, err := e.PlanOf("PurchaseOrder", v.Fingerprint)
		if err != nil || pl != v.Plan || n != v.Number {
			t.Errorf("PlanOf version %d's fingerprint: plan %p (want %p), number %d, %v", v.Number, pl, v.Plan, n, err)
		}
	}
	if _, _, err := e.PlanOf("PurchaseOrder", "0000"); !errors.Is(err, mgmt.ErrNotFound) {
		t.Errorf("an unknown fingerprint: %v, want ErrNotFound", err)
	}
}
