package process

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// persistentEngine deploys the example bundles as they are (the approval
// and the persistent PO are persistent) on a real store in a temp dir.
func persistentEngine(t testing.TB, path string) (*Engine, *persist.Store, map[string]*interp.Version) {
	t.Helper()
	st, err := persist.Open(path, persist.Options{MaxBatchDelay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ip := &inProcessPartners{}
	e := NewEngine(Options{Store: st, Partners: ip.bind})
	return e, st, deployExamples(t, e)
}

// deployExamples deploys the approval and persistent PO examples as they
// are, and returns their processes by local name.
func deployExamples(t testing.TB, e *Engine) map[string]*interp.Version {
	t.Helper()
	procs := map[string]*interp.Version{}
	for _, b := range []string{"order-approval", "purchase-order-persistent"} {
		ps, err := loadBundle(filepath.Join("../../deploy", b))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Deploy(ps...); err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			procs[p.Name.Local] = p
		}
	}
	return procs
}

func TestPersistentCheckpointRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	e, st, procs := persistentEngine(t, path)
	ap := procs["OrderApproval"]
	if st, err := approvalCall(t, e, ap, "requestApproval", map[string]string{"requestId": "P-1", "amount": "3", "requester": "ann"}); err != nil || st != "PENDING" {
		t.Fatalf("request: %q %v", st, err)
	}
	list := storedInstances(t, e, mgmt.Query{Process: "OrderApproval"})
	if len(list) != 1 {
		t.Fatalf("instances: %+v", list)
	}
	in := list[0]
	if in.State != "waiting" || in.Correlations["byRequest"] != "P-1" || !strings.Contains(in.Variables["status"], "PENDING") {
		t.Fatalf("stored instance: %+v", in)
	}
	// Nothing of the in-memory registry holds it: the decision loads it
	// from the store.
	if len(e.reg.live) != 0 {
		t.Fatalf("a persistent instance is held in memory")
	}
	if st, err := approvalCall(t, e, ap, "decide", map[string]string{"requestId": "P-1", "approved": "true", "approver": "bob"}); err != nil || st != "APPROVED" {
		t.Fatalf("decide: %q %v", st, err)
	}
	list = storedInstances(t, e, mgmt.Query{State: "completed"})
	if len(list) != 1 || !strings.Contains(list[0].Variables["status"], "APPROVED") || !strings.Contains(list[0].Variables["decision"], "bob") {
		t.Fatalf("completed instance: %+v", list)
	}
	if _, ok, _ := st.Route(interp.RouteKey(ap, "decide", "byRequest", "P-1")); ok {
		t.Errorf("the route outlived the wait")
	}

	// The persistent PO: no checkpoint. Nothing of it is stored before its
	// calls (its client is not answered yet: docs/architecture.md), and its
	// cleanup deletes the completed instance, so the end's commit would
	// write nothing.
	po := procs["PurchaseOrderPersistent"]
	before := st.Stats().Checkpoints
	out, fault, err := submit(t, e, po, poMessage(t, "po-request.xml"))
	if err != nil || fault != nil || childText(out.Part("payload"), "total") != "322.48" {
		t.Fatalf("persistent PO: %v %v %v", out, fault, err)
	}
	if n := st.Stats().Checkpoints - before; n != 0 {
		t.Errorf("persistent PO wrote %d checkpoints, want 0", n)
	}
	list = storedInstances(t, e, mgmt.Query{Process: "PurchaseOrderPersistent"})
	if len(list) != 0 {
		t.Errorf("cleanup on success left %d instances", len(list))
	}
}

func TestInMemoryStoresNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orchd.db")
	st, err := persist.Open(path, persist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	procs, err := loadBundle(exampleBundle)
	if err != nil {
		t.Fatal(err)
	}
	ip := &inProcessPartners{}
	e := NewEngine(Options{Store: st, Partners: ip.bind})
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, _, err := submit(t, e, procs[0], poMessage(t, "po-request.xml")); err != nil {
			t.Fatal(err)
		}
	}
	if s := st.Stats(); s.Commits != 0 || s.Checkpoints != 0 || s.BytesWritten != 0 {
		t.Errorf("in-memory exchanges touched the store: %+v", s)
	}
}

// BenchmarkPurchaseOrderPersistent is BenchmarkPurchaseOrder for the
// persistent variant, with fsync: no checkpoint per exchange (none before
// the calls of an unanswered new instance, and the end's would write
// nothing: cleanup deletes the completed instance). kept is the same PO
// with its instances kept (no cleanup): one checkpoint, at the end. Both
// report the store's checkpoints and write transactions (fsyncs) per
// exchange.
func BenchmarkPurchaseOrderPersistent(b *testing.B) {
	for _, kept := range []bool{false, true} {
		name := map[bool]string{false: "cleanup", true: "kept"}[kept]
		b.Run(name, func(b *testing.B) {
			st, err := persist.Open(filepath.Join(b.TempDir(), "orchd.db"), persist.Options{MaxBatchDelay: 2 * time.Millisecond})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			dir := filepath.Join(b.TempDir(), "po")
			copyDir(b, "../../deploy/purchase-order-persistent", dir)
			if kept {
				dd := filepath.Join(dir, "deploy.xml")
				d, err := os.ReadFile(dd)
				if err != nil || !bytes.Contains(d, []byte(`<cleanup on="success"/>`)) {
					b.Fatalf("deploy.xml: %v", err)
				}
				if err := os.WriteFile(dd, bytes.Replace(d, []byte(`<cleanup on="success"/>`), nil, 1), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			procs, err := loadBundle(dir)
			if err != nil {
				b.Fatal(err)
			}
			ip := &inProcessPartners{}
			e := NewEngine(Options{Store: st, Partners: ip.bind})
			if err := e.Deploy(procs...); err != nil {
				b.Fatal(err)
			}
			p := procs[0]
			payload := poMessage(b, "po-request.xml")
			before := st.Stats()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := submit(b, e, p, payload.Copy()); err != nil {
						b.Error(err)
						return
					}
				}
			})
			after := st.Stats()
			b.ReportMetric(float64(after.Checkpoints-before.Checkpoints)/float64(b.N), "checkpoints/op")
			b.ReportMetric(float64(after.Commits-before.Commits)/float64(b.N), "fsyncs/op")
		})
	}
}

// New persistent instances do not wait for each other's partner calls:
// until its first checkpoint nobody else can reach an instance, so its
// run takes no stripe before (create). 65 POs, more than there are
// stripes, so that two of them share one, are all inside their CRM call
// at once: the partner holds each call until the 65th arrives.
func TestNewInstancesShareNoStripe(t *testing.T) {
	st, err := persist.Open(filepath.Join(t.TempDir(), "orchd.db"), persist.Options{MaxBatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = len(stripes{}) + 1
	var inCall atomic.Int32
	all := make(chan struct{})
	ip := &inProcessPartners{}
	e := NewEngine(Options{Store: st, Partners: func(ep *exchange.Endpoint) exchange.Partner {
		inner := ip.bind(ep)
		return exchange.PartnerFunc(func(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
			if c.Operation.Name == "recordPurchaseOrder" {
				if int(inCall.Add(1)) == n {
					close(all)
				}
				select {
				case <-all:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return inner.Invoke(ctx, c)
		})
	}})
	defer e.Close()
	po := deployExamples(t, e)["PurchaseOrderPersistent"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := submitCtx(ctx, e, po, poMessage(t, "po-request.xml")); err != nil {
				errs <- err
			}
		}()
	}
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		cancel()
		wg.Wait()
		t.Fatalf("only %d of %d new instances were inside their CRM call at once: they waited for each other", inCall.Load(), n)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
