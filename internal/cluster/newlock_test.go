package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/etcdtest"
)

// TestAcquireNew: the locks of new instances asked for together are taken
// in fewer transactions than locks (one etcd revision for several), each
// is exclusive as Acquire's is, one whose key exists waits for it, and a
// lock released with a commit (ReleaseWithNext, FenceOps in that commit's
// transaction) is gone and needs no Release of its own.
func TestAcquireNew(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	a := join(t, ec, "n", "a", "http://a", cluster.Options{Reentrant: true})
	b := join(t, ec, "n", "b", "http://b", cluster.Options{})
	ctx := context.Background()

	const n = 32
	locks := make([]*cluster.Lock, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := a.AcquireNew(ctx, fmt.Sprintf("new-%d", i))
			if err != nil {
				errs <- err
				return
			}
			locks[i] = l
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	revs := map[int64]bool{}
	for _, l := range locks {
		revs[l.Revision()] = true
	}
	t.Logf("%d new locks in %d transactions", n, len(revs))
	if len(revs) >= n {
		t.Errorf("%d new locks took %d transactions: not batched", n, len(revs))
	}
	for i, l := range locks {
		if _, err := b.TryAcquire(ctx, fmt.Sprintf("new-%d", i)); !errors.Is(err, cluster.ErrHeld) {
			t.Fatalf("b took new-%d while a holds it: %v", i, err)
		}
		// a's lock fences as an acquired one.
		if resp, err := a.cli.Txn(ctx).If(l.Fence()).Commit(); err != nil || !resp.Succeeded {
			t.Fatalf("new-%d: fence of a fresh lock fails: %v %v", i, resp, err)
		}
	}

	// Released with a commit: the commit's transaction deletes the key.
	l := locks[0]
	l.ReleaseWithNext()
	resp, err := a.cli.Txn(ctx).If(l.Fence()).Then(l.FenceOps()...).Commit()
	if err != nil || !resp.Succeeded {
		t.Fatalf("commit releasing new-0: %v %v", resp, err)
	}
	l.FenceDone(resp.Header.Revision, nil)
	if len(l.FenceOps()) != 0 {
		t.Error("a released lock still writes in the next commit")
	}
	if got, err := b.TryAcquire(ctx, "new-0"); err != nil {
		t.Fatalf("b cannot take new-0 after a's commit released it: %v", err)
	} else if err := l.Release(ctx); err != nil || !fenceHolds(t, b.cli, got) {
		t.Fatalf("a's Release after its commit released the lock: %v; b's lock deleted", err)
	}

	// A release whose commit failed is done by Release.
	l = locks[1]
	l.ReleaseWithNext()
	l.FenceDone(0, errors.New("commit failed"))
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(ctx, "new-1"); err != nil {
		t.Fatalf("new-1 still held after a commit that failed and Release: %v", err)
	}

	// A new lock whose key exists waits for it, as Acquire.
	done := make(chan error, 1)
	go func() {
		l, err := a.AcquireNew(ctx, "new-0") // b holds it now
		if err == nil {
			err = l.Release(ctx)
		}
		done <- err
	}()
	if got, err := b.TryAcquire(ctx, "new-0"); !errors.Is(err, cluster.ErrHeld) && got != nil {
		t.Fatalf("b's hold of new-0: %v", err)
	}
	holders, err := b.Holders(ctx)
	if err != nil || holders["new-0"] != "b" {
		t.Fatalf("holders %v %v", holders, err)
	}
	if _, err := b.cli.Delete(ctx, "/orchd/n/locks/new-0"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("AcquireNew of a held key, once it is free: %v", err)
	}
}

// fenceHolds says l's fence holds.
func fenceHolds(t *testing.T, cli *clientv3.Client, l *cluster.Lock) bool {
	t.Helper()
	resp, err := cli.Txn(context.Background()).If(l.Fence()).Commit()
	return err == nil && resp.Succeeded
}
