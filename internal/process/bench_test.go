package process

import (
	"testing"
)

// BenchmarkPurchaseOrder runs one purchase-order exchange through the
// runtime per iteration, with in-process partners (no HTTP, no envelope).
// The request payload is deep-copied per iteration, as a decoder would
// hand over a fresh tree.
func BenchmarkPurchaseOrder(b *testing.B) {
	e, p, _ := loadPO(b)
	benchPO(b, e, p)
}

// benchPO runs b.N purchase orders through p, one after the other.
func benchPO(b *testing.B, e *Engine, p *Process) {
	payload := poMessage(b, "po-request.xml")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, fault, err := submit(b, e, p, payload.Copy())
		if err != nil || fault != nil || out == nil {
			b.Fatalf("exchange failed: out=%v fault=%v err=%v", out, fault, err)
		}
	}
}

func BenchmarkPurchaseOrderParallel(b *testing.B) {
	e, p, _ := loadPO(b)
	payload := poMessage(b, "po-request.xml")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			out, fault, err := submit(b, e, p, payload.Copy())
			if err != nil || fault != nil || out == nil {
				b.Errorf("exchange failed: out=%v fault=%v err=%v", out, fault, err)
				return
			}
		}
	})
}
