package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/etcdtest"
)

// TestMeasureEtcdVsBbolt measures the persistent PO on one orchd with the
// bbolt store (A) against one with the etcd store (B, an embedded 1-member
// etcd in this process) in the same run, with orchd bench, and prints
// etcd round trips and bytes per exchange from /metrics. It is a
// measurement, not a check: it runs only with ORCHD_MEASURE=1 (see
// docs/etcd.md). ORCHD_MEASURE_DURATION sets the time per level.
func TestMeasureEtcdVsBbolt(t *testing.T) {
	if os.Getenv("ORCHD_MEASURE") == "" {
		t.Skip("set ORCHD_MEASURE=1 to measure")
	}
	dur := "5s"
	if d := os.Getenv("ORCHD_MEASURE_DURATION"); d != "" {
		dur = d
	}
	c := etcdtest.Start(t, 1)
	crm, erp := startMocks(t)
	// The shipped bundle: completed instances are deleted.
	deploy := t.TempDir()
	copyBundleFrom(t, "../../deploy/purchase-order-persistent", deploy, "po-persistent", crm, erp, nil)
	a := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
	b := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--store", "etcd",
		"--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--etcd-prefix", "/orchd/measure")
	type snap struct{ tx, rd, cps, bytes, n float64 }
	read := func(o *orchd) snap {
		_, m := get(t, o.base+"/metrics")
		var s snap
		num := func(series string) float64 {
			var v float64
			if strings.Contains(m, series) {
				fmt.Sscan(metricValue(t, m, series), &v)
			}
			return v
		}
		s.tx = num("orchd_store_write_transactions_total")
		s.rd = num("orchd_store_read_transactions_total")
		s.cps = num("orchd_store_checkpoints_total")
		s.bytes = num("orchd_store_written_bytes_total")
		s.n = num(`orchd_instances_started_total{process="PurchaseOrderPersistent"}`)
		return s
	}
	a0, b0 := read(a), read(b)
	var out, errb bytes.Buffer
	args := []string{"bench", "--url", a.base + persistentPOPath, "--vs", b.base + persistentPOPath,
		"--concurrency", "1,16,64", "--duration", dur, "--warmup", "1s", "--expect", "//po:status = 'ACCEPTED'"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if code := run(ctx, args, &out, &errb); code != 0 {
		t.Fatalf("bench exit %d: %s\n%s", code, errb.String(), out.String())
	}
	t.Logf("A = bbolt, B = etcd\n%s", out.String())
	a1, b1 := read(a), read(b)
	for _, x := range []struct {
		name   string
		s0, s1 snap
	}{{"bbolt", a0, a1}, {"etcd", b0, b1}} {
		d := snap{x.s1.tx - x.s0.tx, x.s1.rd - x.s0.rd, x.s1.cps - x.s0.cps, x.s1.bytes - x.s0.bytes, x.s1.n - x.s0.n}
		t.Logf("%s: %.0f exchanges, %.0f checkpoints, %.0f write txns, %.0f read txns; per exchange: %.2f checkpoints, %.3f write txns, %.3f read txns, %.0f bytes",
			x.name, d.n, d.cps, d.tx, d.rd, d.cps/d.n, d.tx/d.n, d.rd/d.n, d.bytes/d.n)
	}
}
