package diagram

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/plan"
)

// corpusPlan is one compiled process of the ODE corpus or of deploy/.
type corpusPlan struct {
	name string // bundle/process
	p    *plan.Plan
}

var (
	corpusOnce  sync.Once
	corpusPlans []corpusPlan
	corpusSeen  int // bundles tried
)

// corpus compiles every bundle of testdata/ode-corpus (as ODE would:
// compatibility mode ODE, the shared folders its tests import from) and
// of deploy/, and returns the processes that compile.
func corpus(t testing.TB) []corpusPlan {
	t.Helper()
	corpusOnce.Do(func() {
		var dirs []string
		for _, root := range []string{"../../testdata/ode-corpus", "../../deploy"} {
			_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && d.Name() == "deploy.xml" {
					dirs = append(dirs, filepath.Dir(path))
				}
				return nil
			})
		}
		sort.Strings(dirs)
		corpusSeen = len(dirs)
		lo := compile.LoadOptions{Compat: check.ODE, SharedFolders: []string{"ProbeService", "FaultService"}}
		for _, dir := range dirs {
			ps, err := compile.LoadBundleWith(dir, lo)
			if err != nil {
				continue // refused by the compiler: nothing deploys, nothing to draw
			}
			for _, p := range ps {
				corpusPlans = append(corpusPlans, corpusPlan{filepath.Base(dir) + "/" + p.Name.Local, p})
			}
		}
	})
	if len(corpusPlans) < 50 {
		t.Fatalf("only %d processes of %d bundles compile", len(corpusPlans), corpusSeen)
	}
	return corpusPlans
}

// inside reports whether box a lies within box b.
func inside(a, b Box) bool {
	return a.X >= b.X && a.Y >= b.Y && a.X+a.W <= b.X+b.W && a.Y+a.H <= b.Y+b.H
}

// overlap reports whether boxes a and b share any area.
func overlap(a, b Box) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// checkLayout returns what is wrong with l: a child outside its parent,
// two siblings overlapping, a box outside the picture, an activity drawn
// twice.
func checkLayout(l *Layout) []string {
	var bad []string
	seen := map[int]bool{}
	children := map[int][]int{}
	for i, b := range l.Boxes {
		if b.W <= 0 || b.H <= 0 || b.X < 0 || b.Y < 0 || b.X+b.W > l.W || b.Y+b.H > l.H {
			bad = append(bad, "box "+b.Kind+" "+b.Name+b.Label+" outside the picture or empty")
		}
		if b.Role == RoleActivity {
			if seen[b.ID] {
				bad = append(bad, "activity drawn twice: "+b.Kind+" "+b.Name)
			}
			seen[b.ID] = true
		}
		if b.Parent >= 0 {
			if !inside(b, l.Boxes[b.Parent]) {
				bad = append(bad, "child outside its parent: "+b.Kind+" "+b.Name+b.Label)
			}
			children[b.Parent] = append(children[b.Parent], i)
		} else if i != 0 {
			bad = append(bad, "a second root")
		}
	}
	for _, kids := range children {
		for x := range kids {
			for y := x + 1; y < len(kids); y++ {
				if a, b := l.Boxes[kids[x]], l.Boxes[kids[y]]; overlap(a, b) {
					bad = append(bad, "siblings overlap: "+a.Kind+" "+a.Name+a.Label+" and "+b.Kind+" "+b.Name+b.Label)
				}
			}
		}
	}
	for _, a := range l.Arrows {
		if a.From < 0 || a.From >= len(l.Boxes) || a.To < 0 || a.To >= len(l.Boxes) {
			bad = append(bad, "an arrow to nowhere: "+a.Link)
		}
	}
	return bad
}

// TestCorpusLayouts lays out every process of the ODE corpus that
// compiles (and deploy/'s): no box outside its parent, no siblings
// overlapping, every activity with an element that the block structure
// reaches drawn once, every flow link drawn, and the SVG well-formed.
func TestCorpusLayouts(t *testing.T) {
	links := 0
	for _, cp := range corpus(t) {
		t.Run(cp.name, func(t *testing.T) {
			l := New(cp.p)
			for _, bad := range checkLayout(l) {
				t.Error(bad)
			}
			drawn := map[int]bool{}
			for _, b := range l.Boxes {
				if b.Role == RoleActivity {
					drawn[b.ID] = true
				}
			}
			for _, a := range reachable(cp.p) {
				if tag, name := tagOf(a); tag != "" && !drawn[a.ID()] {
					t.Errorf("activity %d <%s name=%q> at %s not drawn", a.ID(), tag, name, a.Where())
				}
			}
			want := 0
			for _, a := range cp.p.Acts {
				if l, ok := a.(*plan.Linked); ok {
					want += len(l.Targets)
				}
			}
			if len(l.Arrows) != want {
				t.Errorf("%d links drawn, want %d", len(l.Arrows), want)
			}
			links += len(l.Arrows)
			var buf bytes.Buffer
			if err := l.SVG(&buf, Overlay{}); err != nil {
				t.Fatal(err)
			}
			wellFormed(t, buf.Bytes())
		})
	}
	if links == 0 {
		t.Error("no process of the corpus has a link drawn")
	}
}

// reachable lists the activities the block structure holds: from the
// root through bodies, branches and handlers (not the constructs the
// compiler shares between scopes).
func reachable(p *plan.Plan) []plan.Activity {
	var out []plan.Activity
	var walk func(a plan.Activity)
	handlers := func(h *plan.FaultHandlers) {
		if h == nil {
			return
		}
		for _, c := range h.Catches {
			walk(c.Act)
		}
		walk(h.CatchAll)
	}
	walk = func(a plan.Activity) {
		if a == nil {
			return
		}
		out = append(out, a)
		switch x := a.(type) {
		case *plan.Linked:
			walk(x.Act)
		case *plan.Sequence:
			for _, c := range x.Children {
				walk(c)
			}
		case *plan.Flow:
			for _, c := range x.Children {
				walk(c)
			}
		case *plan.IfAct:
			for _, c := range x.Branches {
				walk(c)
			}
			walk(x.Els)
		case *plan.Pick:
			for _, m := range x.Msgs {
				walk(m.Act)
			}
			for _, m := range x.Alarms {
				walk(m.Act)
			}
		case *plan.While:
			walk(x.Body)
		case *plan.RepeatUntil:
			walk(x.Body)
		case *plan.ForEach:
			if x.Body != nil {
				walk(x.Body)
			}
		case *plan.Scope:
			walk(x.Body)
			handlers(x.Handlers)
			walk(x.Comp)
			walk(x.Term)
			if x.Events != nil {
				for _, e := range x.Events.Events {
					walk(e.Body)
				}
				for _, e := range x.Events.Alarms {
					walk(e.Body)
				}
			}
		}
	}
	walk(p.Root)
	handlers(p.Handlers)
	return out
}

// wellFormed fails t unless doc parses as XML to its end.
func wellFormed(t *testing.T, doc []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG not well-formed: %v\n%s", err, doc)
		}
	}
}

// largest is the corpus process with the most activities.
func largest(t testing.TB) corpusPlan {
	var best corpusPlan
	for _, cp := range corpus(t) {
		if best.p == nil || len(cp.p.Acts) > len(best.p.Acts) {
			best = cp
		}
	}
	return best
}

// BenchmarkLargest lays out and renders the largest process of the
// corpus with a version overlay: what orchd ctl diagram costs the server.
func BenchmarkLargest(b *testing.B) {
	cp := largest(b)
	ov := Overlay{Marks: map[int]Mark{}}
	for _, a := range cp.p.Acts {
		ov.Marks[a.ID()] = Mark{State: "heat-2", Fill: heat[2], Note: "×12 · 3.4 ms · p99 9.1 ms"}
	}
	b.ReportMetric(float64(len(cp.p.Acts)), "activities")
	cpu, n := cpuTime(), 0
	for b.Loop() {
		var buf bytes.Buffer
		if err := New(cp.p).SVG(&buf, ov); err != nil {
			b.Fatal(err)
		}
		n++
	}
	// CPU time per drawing: what it costs the server, whereas ns/op
	// grows with whatever else the machine runs.
	b.ReportMetric(float64(cpuTime()-cpu)/float64(max(n, 1)), "cpu-ns/op")
}

func TestLargestNamed(t *testing.T) {
	cp := largest(t)
	if !strings.Contains(cp.name, "/") || len(cp.p.Acts) < 20 {
		t.Errorf("largest process %s has %d activities", cp.name, len(cp.p.Acts))
	}
	t.Logf("largest: %s, %d activities", cp.name, len(cp.p.Acts))
}
