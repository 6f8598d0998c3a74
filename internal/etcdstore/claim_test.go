package etcdstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/etcdtest"
)

// TestClaim: on one prefix, an orchd alone refuses a second one alone
// and a cluster node (with an error saying what to do), cluster nodes
// share it, and a claim is free again once its store closed.
func TestClaim(t *testing.T) {
	c := etcdtest.Start(t, 1)
	open := func(prefix string) *Store {
		t.Helper()
		st, err := Open(Options{Endpoints: c.Endpoints(), Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	ctx := context.Background()
	a := open("/claim/solo/")
	if err := a.Claim(ctx, "", "a"); err != nil {
		t.Fatal(err)
	}
	b := open("/claim/solo/")
	err := b.Claim(ctx, "", "b")
	if !errors.Is(err, ErrPrefixInUse) || !strings.Contains(err.Error(), "--cluster") || !strings.Contains(err.Error(), "solo/a") {
		t.Fatalf("a second orchd alone: %v", err)
	}
	if err := b.Claim(ctx, "c1", "b"); !errors.Is(err, ErrPrefixInUse) {
		t.Fatalf("a cluster node beside an orchd alone: %v", err)
	}
	_ = a.Close()
	if err := b.Claim(ctx, "", "b"); err != nil {
		t.Fatalf("after the first closed: %v", err)
	}

	n1, n2 := open("/claim/cluster/"), open("/claim/cluster/")
	if err := n1.Claim(ctx, "c1", "n1"); err != nil {
		t.Fatal(err)
	}
	if err := n2.Claim(ctx, "c1", "n2"); err != nil {
		t.Fatalf("a second cluster node: %v", err)
	}
	if err := open("/claim/cluster/").Claim(ctx, "", "x"); !errors.Is(err, ErrPrefixInUse) {
		t.Fatalf("an orchd alone beside cluster nodes: %v", err)
	}
}
