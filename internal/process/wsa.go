package process

import (
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
)

// PartnerAllowFor returns the deploy.xml partner address rules
// (orchd:partnerAllow) of the process serving ep, nil when it has none
// or ep is not served: the front door sends the callbacks of that
// endpoint's requests (a non-anonymous wsa:ReplyTo) under them, as the
// process's own calls to addresses chosen at run time.
func (e *Engine) PartnerAllowFor(ep *exchange.Endpoint) *partnerallow.List {
	if p := e.servedProcess(ep); p != nil {
		return p.PartnerAllow
	}
	return nil
}
