package process

import (
	"fmt"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/xmlparse"
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
func benchPO(b *testing.B, e *Engine, p *interp.Version) {
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

// BenchmarkParseStored reads back a stored variable whose element carries
// n attributes (a process can build one by assignment, beyond the input
// limits) with the linear-time parser stored state now goes through; the
// etree sub-benchmarks are the reader used before, for comparison (up to
// 10,000 attributes: it takes about a second at 100,000).
func BenchmarkParseStored(b *testing.B) {
	for _, n := range []int{100, 10_000, 100_000} {
		var sb strings.Builder
		sb.WriteString("<slot><v")
		for i := range n {
			fmt.Fprintf(&sb, ` a%d="%d"`, i, i)
		}
		sb.WriteString("/></slot>")
		data := []byte(sb.String())
		b.Run(fmt.Sprintf("attrs=%d", n), func(b *testing.B) {
			for b.Loop() {
				el, err := xmlparse.Stored(data)
				if err != nil || len(el.ChildElements()[0].Attr) != n {
					b.Fatalf("parseStored: %v", err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/attr")
		})
		if n > 10_000 {
			continue
		}
		b.Run(fmt.Sprintf("etree/attrs=%d", n), func(b *testing.B) {
			for b.Loop() {
				doc := etree.NewDocument()
				if err := doc.ReadFromBytes(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/attr")
		})
	}
}
