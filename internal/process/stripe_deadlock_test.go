package process

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// TestInProcessPersistentCallSameStripe calls, from a persistent instance
// that holds its stripe (its reply made it checkpoint before the invoke),
// a persistent process of the same engine in process, whose new instance
// commits before its reply leaves and so takes its own stripe inside the
// caller's call. With one mutex per stripe (64, by a hash of the id) the
// two instances share a mutex when their ids hash alike, and the callee
// waits for the caller, which waits for the callee's reply. Ids are
// random (persist.NewID), so about one exchange in 64 puts the callee on
// the caller's stripe; 640 exchanges miss that with probability
// (63/64)^640 < 0.005%. A deadlock
// shows as an exchange that does not end within its bound: the test then
// fails naming the two instances and their stripe, and leaves the engine
// unclosed (its runs never end).
//
// Only the engine's exported API and the package's bundle loader are
// used, so the test moves with the runtime.
func TestInProcessPersistentCallSameStripe(t *testing.T) {
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{MaxBatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	procs, err := loadBundle("testdata/bundles/rt-call-persistent")
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(Options{Store: st})
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	var caller *interp.Version
	for _, p := range procs {
		if p.Name.Local == "Caller" {
			caller = p
		}
	}
	if caller == nil || caller.InMemory {
		t.Fatalf("no persistent Caller in the bundle")
	}
	const n = 640
	for i := range n {
		if err := callBounded(e, caller, fmt.Sprintf("S-%d", i), 10*time.Second); err != nil {
			var stacks strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Fatalf("exchange %d of %d: %v\n%s\ngoroutines:\n%s", i+1, n, err, runningOnStripes(t, st), stacks.String())
		}
	}
	e.Close()
	var completed, other int
	if err := st.Instances(func(in *persist.Instance) bool {
		if in.State == persist.Completed {
			completed++
		} else {
			other++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if completed != 2*n || other != 0 {
		t.Fatalf("stored: %d completed, %d in another state; want %d completed", completed, other, 2*n)
	}
}

// callBounded sends one request to p's run operation and waits, at most
// bound, for the reply and the end of the run (Dispatch returning).
func callBounded(e *Engine, p *interp.Version, id string, bound time.Duration) error {
	ep := p.Endpoints[0]
	op := opNamed(ep, "run")
	in := exchange.NewMessage(op.Input.Name)
	in.Parts["payload"] = testReq(id, "1", "")
	replied := make(chan *etree.Element, 1)
	ex := &exchange.Exchange{Endpoint: ep, Operation: op, Input: in, Respond: func(m *exchange.Message, f *exchange.Fault) {
		if f != nil || m == nil {
			replied <- nil
			return
		}
		replied <- m.Part("payload")
	}}
	ended := make(chan error, 1)
	go func() { ended <- e.Dispatch(context.Background(), ex) }()
	timeout := time.After(bound)
	var got bool
	for {
		select {
		case r := <-replied:
			if r == nil || childText(r, "a") != "accepted" {
				return fmt.Errorf("reply %v, want a=accepted", r)
			}
			got = true
		case err := <-ended:
			if err != nil {
				return fmt.Errorf("run: %w", err)
			}
			if !got && len(replied) > 0 {
				// Both were ready and select took the end first.
				if r := <-replied; r != nil && childText(r, "a") == "accepted" {
					return nil
				}
			}
			if !got {
				return fmt.Errorf("run ended without a reply")
			}
			return nil
		case <-timeout:
			return fmt.Errorf("not ended after %s (replied: %v): the caller's run is stuck in its in-process call", bound, got)
		}
	}
}

// runningOnStripes lists the stored instances not completed, with the
// stripe each id hashes to (run.go's stripes.of, FNV-1a mod 64).
func runningOnStripes(t *testing.T, st *persist.Store) string {
	var b strings.Builder
	if err := st.Instances(func(in *persist.Instance) bool {
		if in.State != persist.Completed {
			fmt.Fprintf(&b, "stored %s %s %s on stripe %d\n", in.Process, in.ID, in.State, stripeIndex(in.ID))
		}
		return true
	}); err != nil {
		t.Error(err)
	}
	return b.String()
}

// stripeIndex is the index of id's stripe among the engine's 64.
func stripeIndex(id string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return h % 64
}
