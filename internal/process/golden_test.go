package process

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestPurchaseOrderGolden runs the example purchase order with in-process
// partners and compares the serialized ack part (etree, no indentation)
// with testdata/golden/po-ack.xml. Run with -update to rewrite it.
func TestPurchaseOrderGolden(t *testing.T) {
	e, p, _ := loadPO(t)
	out, fault, err := submit(t, e, p, poMessage(t, "po-request.xml"))
	if err != nil || fault != nil {
		t.Fatalf("err=%v fault=%v", err, fault)
	}
	ack := out.Part("payload")
	if ack == nil {
		t.Fatal("no payload part in the reply")
	}
	doc := etree.NewDocument()
	doc.SetRoot(ack.Copy())
	got, err := doc.WriteToString()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "po-ack.xml")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestPurchaseOrderGolden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("ack differs from %s:\n got %s\nwant %s", golden, got, want)
	}
}
