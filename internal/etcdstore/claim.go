package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrPrefixInUse means another live orchd uses the store's prefix in a
// way this one may not share: an orchd without --cluster owns it alone.
var ErrPrefixInUse = errors.New("etcd prefix in use by another live orchd")

// claimTTL is the lease of a claim: a node that dies frees the prefix
// this long after.
const claimTTL = 5 * time.Second

// Claim records under the prefix (owners/, bound to a lease the store
// keeps alive until Close) that this orchd uses it: alone (cluster
// empty), or as a node of the named cluster. An orchd alone refuses a
// prefix any other live orchd uses, and a cluster node one that an orchd
// alone uses, with an error wrapping ErrPrefixInUse that says what to do:
// two orchds on one prefix without a cluster would run the same
// instances with no lock between them. A claim left by an orchd that
// died (its lease not yet expired: a restart) is waited out: Claim
// refuses only a claim still there a lease's life later.
func (s *Store) Claim(ctx context.Context, cluster, who string) error {
	deadline := time.Now().Add(claimTTL + time.Second)
	for {
		err := s.claim(ctx, cluster, who)
		if !errors.Is(err, ErrPrefixInUse) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *Store) claim(ctx context.Context, cluster, who string) error {
	if who == "" {
		who, _ = os.Hostname()
	}
	owners := s.prefix + "owners/"
	key := owners + "solo/" + who
	guard := owners // an orchd alone: nobody else at all
	if cluster != "" {
		key = owners + "cluster/" + cluster + "/" + who
		guard = owners + "solo/" // a cluster node: no orchd alone
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	lease, err := s.cli.Grant(ctx, int64(claimTTL/time.Second))
	if err != nil {
		return fmt.Errorf("%w: claiming prefix %s: %w", ErrUnavailable, s.prefix, err)
	}
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(guard), "=", 0).WithPrefix()).
		Then(clientv3.OpPut(key, time.Now().UTC().Format(time.RFC3339), clientv3.WithLease(lease.ID))).
		Else(clientv3.OpGet(guard, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(4))).
		Commit()
	if err != nil {
		_, _ = s.cli.Revoke(context.Background(), lease.ID)
		return fmt.Errorf("%w: claiming prefix %s: %w", ErrUnavailable, s.prefix, err)
	}
	if !resp.Succeeded {
		_, _ = s.cli.Revoke(context.Background(), lease.ID)
		var others []string
		for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
			others = append(others, strings.TrimPrefix(string(kv.Key), owners))
		}
		if cluster == "" {
			return fmt.Errorf("%w: --etcd-prefix %s is used by %s; an orchd without --cluster must have its prefix alone: "+
				"run every node with --cluster NAME (they then share the instances safely), or give this one its own --etcd-prefix",
				ErrPrefixInUse, s.prefix, strings.Join(others, ", "))
		}
		return fmt.Errorf("%w: --etcd-prefix %s is used by %s, an orchd without --cluster; "+
			"restart it with --cluster %s, or give this cluster its own --etcd-prefix", ErrPrefixInUse, s.prefix, strings.Join(others, ", "), cluster)
	}
	keep, err := s.cli.KeepAlive(context.Background(), lease.ID)
	if err != nil {
		_, _ = s.cli.Revoke(context.Background(), lease.ID)
		return fmt.Errorf("%w: keeping the claim of prefix %s: %w", ErrUnavailable, s.prefix, err)
	}
	s.closeMu.Lock()
	s.claims = append(s.claims, lease.ID)
	s.closeMu.Unlock()
	go func() {
		for range keep { // drained until the lease is revoked or the client closes
		}
	}()
	return nil
}

// releaseClaims revokes the claims' leases (Close).
func (s *Store) releaseClaims() {
	s.closeMu.Lock()
	ids := s.claims
	s.claims = nil
	s.closeMu.Unlock()
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
		_, _ = s.cli.Revoke(ctx, id)
		cancel()
	}
}
