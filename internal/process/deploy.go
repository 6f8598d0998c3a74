package process

import (
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/bpel"
)

// deployDesc is a bundle's deploy.xml: which processes it deploys and how
// their partner links bind.
type deployDesc struct {
	processes []*deployProcess
}

type deployProcess struct {
	name     qname
	pos      bpel.Pos
	inMemory bool
	provides map[string]serviceRef // partnerLink -> service port
	invokes  map[string]serviceRef
}

type serviceRef struct {
	service qname
	port    string
	pos     bpel.Pos
}

// parseDeploy reads deploy.xml in Apache ODE's format. Like ODE it ignores
// elements it does not know, accepts the legacy fivesight namespace and a
// prefixed port name.
func parseDeploy(doc *bpel.Document, errs *Errors) *deployDesc {
	root := doc.Root
	ns := root.NamespaceURI()
	if root.Tag != "deploy" || (ns != nsDD && ns != nsDDLegacy) {
		errs.add(doc.Pos(root), root.Tag, "not an ODE deployment descriptor: want {%s}deploy", nsDD)
		return nil
	}
	d := &deployDesc{}
	for _, pe := range root.SelectElements("process") {
		sp, local, err := bpel.ResolveQName(pe, pe.SelectAttrValue("name", ""), true)
		if err != nil {
			errs.add(doc.Pos(pe), "process", "attribute name: %v", err)
			continue
		}
		p := &deployProcess{name: qname{Space: sp, Local: local}, pos: doc.Pos(pe),
			provides: map[string]serviceRef{}, invokes: map[string]serviceRef{}}
		for _, c := range pe.ChildElements() {
			switch c.Tag {
			case "in-memory":
				p.inMemory = strings.TrimSpace(c.Text()) == "true"
			case "provide", "invoke":
				pl := c.SelectAttrValue("partnerLink", "")
				se := c.SelectElement("service")
				if se == nil {
					errs.add(doc.Pos(c), c.Tag, "partnerLink %q has no <service>", pl)
					continue
				}
				ref, ok := parseServiceRef(doc, se, errs)
				if !ok {
					continue
				}
				if c.Tag == "provide" {
					p.provides[pl] = ref
				} else {
					p.invokes[pl] = ref
				}
			}
		}
		d.processes = append(d.processes, p)
	}
	if len(d.processes) == 0 {
		errs.add(doc.Pos(root), "deploy", "deploys no <process>")
	}
	return d
}

func parseServiceRef(doc *bpel.Document, se *etree.Element, errs *Errors) (serviceRef, bool) {
	sp, local, err := bpel.ResolveQName(se, se.SelectAttrValue("name", ""), true)
	if err != nil {
		errs.add(doc.Pos(se), "service", "attribute name: %v", err)
		return serviceRef{}, false
	}
	return serviceRef{service: qname{Space: sp, Local: local}, port: se.SelectAttrValue("port", ""), pos: doc.Pos(se)}, true
}
