package mockpartner

import (
	"testing"

	"github.com/orchd/orchd/internal/exchange"
)

func TestAddrs(t *testing.T) {
	crmEP := &exchange.Endpoint{Service: crmService, Address: "http://127.0.0.1:19101/crm"}
	erpEP := &exchange.Endpoint{Service: erpService, Address: "http://localhost:19102/erp"}
	other := &exchange.Endpoint{Service: exchange.QName{Space: "urn:x", Local: "S"}, Address: "http://h:1/s"}
	tests := []struct {
		name     string
		eps      []*exchange.Endpoint
		crm, erp string
	}{
		{"none: the example's defaults", nil, "127.0.0.1:9101", "127.0.0.1:9102"},
		{"both", []*exchange.Endpoint{other, crmEP, erpEP}, "127.0.0.1:19101", "localhost:19102"},
		{"a relative address keeps the default", []*exchange.Endpoint{{Service: crmService, Address: "/crm"}}, "127.0.0.1:9101", "127.0.0.1:9102"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crm, erp := Addrs(tc.eps)
			if crm != tc.crm || erp != tc.erp {
				t.Errorf("Addrs = %s, %s; want %s, %s", crm, erp, tc.crm, tc.erp)
			}
		})
	}
}
