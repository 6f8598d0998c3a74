package mockpartner

import (
	"net/url"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
)

// The example's partner services, whose addresses the mock partners
// serve.
var (
	crmService = exchange.QName{Space: "urn:example:crm", Local: "CRMService"}
	erpService = exchange.QName{Space: "urn:example:erp", Local: "ERPService"}
)

// Addrs finds, among the partner endpoints deployed processes call, the
// host:port of the example's CRM and ERP services, falling back to the
// example's defaults (127.0.0.1:9101 and :9102).
func Addrs(eps []*exchange.Endpoint) (crm, erp string) {
	crm, erp = "127.0.0.1:9101", "127.0.0.1:9102"
	for _, ep := range eps {
		u, err := url.Parse(ep.Address)
		if err != nil || u.Host == "" {
			continue
		}
		switch ep.Service {
		case crmService:
			crm = u.Host
		case erpService:
			erp = u.Host
		}
	}
	return strings.TrimSpace(crm), strings.TrimSpace(erp)
}
