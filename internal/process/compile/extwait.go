package compile

import (
	"errors"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/plan"
)

// extWait lowers a waiting extension activity (plan.ExtensionWaiter) to
// a plan.ExtWait: the message that ends it arrives on the process's
// extension callback endpoint (made once per process, refusing HTTP),
// correlated on a set of the activity's own whose one property is the
// key part. The engine then routes, stores and recovers the wait as it
// does a <receive>'s.
func (c *compiler) extWait(w plan.ExtensionWaiter, b plan.Base) plan.Activity {
	ep := c.extWaitEndpoint()
	cs := &plan.CorrSet{Name: plan.ExtWaitSetPrefix + b.Pos.String(), Props: []exchange.QName{extWaitProp}}
	if c.p.CorrSets == nil {
		c.p.CorrSets = map[string]*plan.CorrSet{}
	}
	c.p.CorrSets[cs.Name] = cs
	use := &plan.CorrUse{Set: cs, Initiate: "no", In: []*plan.PropExtract{{Prop: extWaitProp, Part: plan.ExtWaitKeyPart}}}
	a := &plan.ExtWait{Base: b, Act: w, Inbound: plan.Inbound{
		Pl:    &plan.PartnerLink{Name: cs.Name, Provided: ep, Idx: -1, Pos: b.Pos},
		Op:    ep.Operations[0],
		Corrs: []*plan.CorrUse{use},
	}}
	c.registerInbound(&a.Inbound, false)
	return a
}

// extWaitProp is the property of an ExtWait's correlation set.
var extWaitProp = exchange.QName{Space: plan.ExtWaitNS, Local: "key"}

// extWaitEndpoint is the process's extension callback endpoint, made on
// first use: service plan.ExtWaitService (path plan.ExtWaitPath), one one-way operation whose
// message has untyped parts, served in process only.
func (c *compiler) extWaitEndpoint() *exchange.Endpoint {
	for _, ep := range c.p.Endpoints {
		if ep.Service.Space == extWaitProp.Space {
			return ep
		}
	}
	ep := &exchange.Endpoint{
		Process: c.p.Name,
		Service: plan.ExtWaitService(c.p.Name),
		Port:    "extwait",
		Version: exchange.SOAP11,
		Auth:    inProcessOnly{},
		Operations: []*exchange.Operation{{
			Name:  plan.ExtWaitOperation,
			Input: &exchange.MessageDesc{Name: exchange.QName{Space: extWaitProp.Space, Local: "done"}, Parts: []exchange.PartDesc{{Name: plan.ExtWaitKeyPart, Type: exchange.QName{Space: "http://www.w3.org/2001/XMLSchema", Local: "string"}}}},
		}},
	}
	c.p.Endpoints = append(c.p.Endpoints, ep)
	return ep
}

// inProcessOnly refuses every request over HTTP: an extension callback
// endpoint is reached only through the engine's Dispatch, by the
// extension that started the wait.
type inProcessOnly struct{}

// errInProcessOnly is what inProcessOnly answers.
var errInProcessOnly = errors.New("extension callback endpoints take no requests over HTTP")

func (inProcessOnly) Authenticate([]*etree.Element, bool) ([]*etree.Element, string, error) {
	return nil, "", errInProcessOnly
}
