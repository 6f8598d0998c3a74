package process

import (
	"context"
	"fmt"

	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/interp"
)

const exampleBundle = "../../deploy/purchase-order"

// inProcessPartners answers CRM and ERP calls in process, the way the mock
// partners do over HTTP: echo poId, hand out a counter-based reference.
type inProcessPartners struct{ crm, erp atomic.Int64 }

func (ip *inProcessPartners) bind(ep *exchange.Endpoint) exchange.Partner {
	return exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
		in := c.Input.Part("parameters")
		if in == nil {
			return nil, fmt.Errorf("no parameters part")
		}
		poID := ""
		for _, ch := range in.ChildElements() {
			if ch.Tag == "poId" {
				poID = ch.Text()
			}
		}
		var resp *etree.Element
		switch c.Operation.Name {
		case "recordPurchaseOrder":
			resp = etree.NewElement("crm:recordPurchaseOrderResponse")
			resp.CreateAttr("xmlns:crm", "urn:example:crm")
			resp.CreateElement("crm:poId").SetText(poID)
			resp.CreateElement("crm:crmRef").SetText(fmt.Sprintf("CRM-%08d", ip.crm.Add(1)))
		case "createWorkOrder":
			resp = etree.NewElement("erp:createWorkOrderResponse")
			resp.CreateAttr("xmlns:erp", "urn:example:erp")
			resp.CreateElement("erp:poId").SetText(poID)
			resp.CreateElement("erp:workOrderId").SetText(fmt.Sprintf("WO-%08d", ip.erp.Add(1)))
		default:
			return nil, fmt.Errorf("unexpected operation %s", c.Operation.Name)
		}
		m := exchange.NewMessage(c.Operation.Output.Name)
		m.Parts["parameters"] = resp
		return m, nil
	})
}

func loadPO(t testing.TB) (*Engine, *interp.Version, *inProcessPartners) {
	t.Helper()
	procs, err := loadBundle(exampleBundle)
	if err != nil {
		t.Fatalf("load example bundle: %v", err)
	}
	ip := &inProcessPartners{}
	e := NewEngine(Options{Partners: ip.bind})
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e, procs[0], ip
}

// poMessage reads a workload request and returns its body element as the
// payload part, made self-contained the way the envelope decoder does.
func poMessage(t testing.TB, file string) *etree.Element {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromFile(filepath.Join("testdata", file)); err != nil {
		t.Fatal(err)
	}
	body := doc.Root().FindElement("./Body/*")
	cp := body.Copy()
	cp.CreateAttr("xmlns:po", "urn:example:po")
	return cp
}

func submit(t testing.TB, e *Engine, p *interp.Version, payload *etree.Element) (*exchange.Message, *exchange.Fault, error) {
	return submitCtx(context.Background(), e, p, payload)
}

// opNamed returns the endpoint's operation called name, or nil.
func opNamed(ep *exchange.Endpoint, name string) *exchange.Operation {
	for _, o := range ep.Operations {
		if o.Name == name {
			return o
		}
	}
	return nil
}

func childText(e *etree.Element, local string) string {
	for _, c := range e.ChildElements() {
		if c.Tag == local {
			return c.Text()
		}
	}
	return ""
}

func TestPurchaseOrderInProcess(t *testing.T) {
	e, p, _ := loadPO(t)
	tests := []struct {
		file, poID, total, crmRef, wo string
	}{
		{"po-request.xml", "PO-000123", "322.48", "CRM-00000001", "WO-00000001"},
		{"po-request-2.xml", "PO-000456", "793.23", "CRM-00000002", "WO-00000002"},
	}
	for _, tc := range tests {
		out, fault, err := submit(t, e, p, poMessage(t, tc.file))
		if err != nil || fault != nil {
			t.Fatalf("%s: err=%v fault=%v", tc.file, err, fault)
		}
		ack := out.Part("payload")
		if ack == nil || ack.Tag != "purchaseOrderAck" || ack.NamespaceURI() != "urn:example:po" {
			t.Fatalf("%s: no ack: %+v", tc.file, out)
		}
		for k, want := range map[string]string{"poId": tc.poID, "total": tc.total, "crmRef": tc.crmRef, "workOrderId": tc.wo, "status": "ACCEPTED"} {
			if got := childText(ack, k); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.file, k, got, want)
			}
		}
	}
}

func TestPurchaseOrderInvalidOrderFault(t *testing.T) {
	e, p, ip := loadPO(t)
	payload := poMessage(t, "po-request.xml")
	items := payload.FindElement("./items")
	for _, it := range items.ChildElements() {
		items.RemoveChild(it)
	}
	out, fault, err := submit(t, e, p, payload)
	if err != nil || out != nil || fault == nil {
		t.Fatalf("want a declared fault, got out=%v fault=%v err=%v", out, fault, err)
	}
	if fault.Name != (exchange.QName{Space: "urn:example:po", Local: "invalidOrder"}) {
		t.Errorf("fault name %s", fault.Name)
	}
	if r := childText(fault.Message.Part("payload"), "reason"); !strings.Contains(r, "no items") {
		t.Errorf("fault reason %q", r)
	}
	if ip.crm.Load() != 0 {
		t.Errorf("CRM was called for an invalid order")
	}
}

// A persistent instance's stashed open requests whose clients gave up
// (reply timeout) are forgotten at once, not kept until the instance runs
// again, which may be never.
func TestAbandonedRequestsDropped(t *testing.T) {
	e := NewEngine(Options{})
	waiting, abandoned := &interp.OpenRequest{}, &interp.OpenRequest{}
	abandoned.State.Store(2)
	e.reg.open["a"] = []*interp.OpenRequest{abandoned}
	e.reg.open["b"] = []*interp.OpenRequest{waiting, abandoned}
	e.dropAbandoned("a")
	e.dropAbandoned("b")
	if _, ok := e.reg.open["a"]; ok {
		t.Errorf("instance a: %d stashed requests, want none", len(e.reg.open["a"]))
	}
	if got := e.reg.open["b"]; len(got) != 1 || got[0] != waiting {
		t.Errorf("instance b: %v, want only the waiting request", got)
	}
}
