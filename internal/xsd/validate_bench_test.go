package xsd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"
)

// BenchmarkValidateSmall validates the purchase order's CRM answer (two
// string leaves), what a partner answer's check costs by default.
func BenchmarkValidateSmall(b *testing.B) {
	dir := "../../deploy/purchase-order"
	set := Load(func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }, []string{"crm.xsd"})
	d, err := set.Element(QName{"urn:example:crm", "recordPurchaseOrderResponse"})
	if err != nil {
		b.Fatal(err)
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromString(`<crm:recordPurchaseOrderResponse xmlns:crm="urn:example:crm"><crm:poId>PO-1</crm:poId><crm:crmRef>CRM-00000001</crm:crmRef></crm:recordPurchaseOrderResponse>`); err != nil {
		b.Fatal(err)
	}
	el := doc.Root()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := set.Validate(d, el); err != nil {
			b.Fatal(err)
		}
	}
}
