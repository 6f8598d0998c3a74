package process

import (
	"errors"
	"sync"
	"testing"

	"github.com/orchd/orchd/internal/process/interp"
)

// TestOnePlanTwoEngines compiles the example bundle once and runs two
// engines from the same plans at the same time (run it with -race): the
// plan is shared and read-only, while each engine's version records keep
// their own partner bindings, metrics and statistics.
func TestOnePlanTwoEngines(t *testing.T) {
	procs, err := loadBundle(exampleBundle)
	if err != nil {
		t.Fatalf("load example bundle: %v", err)
	}
	type node struct {
		e  *Engine
		p  *interp.Version
		ip *inProcessPartners
	}
	nodes := make([]node, 2)
	for i := range nodes {
		ip := &inProcessPartners{}
		e := NewEngine(Options{Partners: ip.bind})
		var vs []*interp.Version
		for _, p := range procs {
			vs = append(vs, interp.NewVersion(p.Plan))
		}
		if err := e.Deploy(vs...); err != nil {
			t.Fatal(err)
		}
		nodes[i] = node{e, vs[0], ip}
	}
	if nodes[0].p.Plan != nodes[1].p.Plan {
		t.Fatal("the two versions do not share one plan")
	}
	payload := poMessage(t, "po-request.xml")
	const perEngine = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*perEngine)
	for i, n := range nodes {
		runs := perEngine + 5*i // different counts, to tell the engines' stats apart
		for range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, fault, err := submit(t, n.e, n.p, payload.Copy())
				switch {
				case err != nil:
					errs <- err
				case fault != nil:
					errs <- fault
				case out == nil:
					errs <- errors.New("no answer")
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("exchange: %v", err)
	}
	for i, n := range nodes {
		want := int64(perEngine + 5*i)
		if got := n.ip.crm.Load(); got != want {
			t.Errorf("engine %d: its CRM partner was called %d times, want %d (bindings shared between engines?)", i, got, want)
		}
		if got := n.p.Stats.Started.Load(); got != uint64(want) {
			t.Errorf("engine %d: version counts %d started instances, want %d", i, got, want)
		}
	}
}
