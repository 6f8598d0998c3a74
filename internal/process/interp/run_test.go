package interp

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/mockpartner"
	"github.com/orchd/orchd/internal/soap"
)

// TestPurchaseOrderWithoutEngine runs the example purchase order with the
// interpreter alone: no engine, no registry, no store. Its partner links
// are bound, as an engine's deploy binds them, to SOAP clients of the
// real CRM and ERP mock partners on loopback; the request is the
// workload's. The run completes, both partners were called once, and the
// reply carries what they answered.
func TestPurchaseOrderWithoutEngine(t *testing.T) {
	p := loadPO(t)
	mp := mockpartner.New(nil)
	crm, erp := httptest.NewServer(mp.CRM()), httptest.NewServer(mp.ERP())
	defer crm.Close()
	defer erp.Close()
	client := soap.NewClient(soap.ClientOptions{})
	for _, pl := range p.Plist {
		if pl.PartnerEP == nil {
			continue
		}
		ep := *pl.PartnerEP
		switch pl.Name {
		case "crm":
			ep.Address = crm.URL
		case "erp":
			ep.Address = erp.URL
		default:
			t.Fatalf("unexpected partner link %s", pl.Name)
		}
		p.Partners[pl.Idx] = client.Partner(&ep)
	}
	a := begin(t, p, "submitPurchaseOrder", poMessage(t, "po-request.xml"))
	if a.out.Result != ResCompleted || a.out.Answer != nil {
		t.Fatalf("run ended %v (%v), want completed", a.out.Result, a.out.Answer)
	}
	if a.n != 1 || a.fault != nil || a.reply == nil {
		t.Fatalf("%d answers, fault %v, reply %v; want one reply", a.n, a.fault, a.reply)
	}
	doc := etree.NewDocument()
	doc.SetRoot(a.reply.Parts["payload"].Copy())
	s, _ := doc.WriteToString()
	for _, want := range []string{"PO-000123", "CRM-00000001", "WO-00000001"} {
		if !strings.Contains(s, want) {
			t.Errorf("reply lacks %s:\n%s", want, s)
		}
	}
}
