package process

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// FuzzCompileBPEL writes the input as the .bpel of a copy of the example
// bundle and loads it: errors are fine, panics are not. A process that
// compiles is also run once on the example request.
func FuzzCompileBPEL(f *testing.F) {
	orig, err := os.ReadFile(filepath.Join(exampleBundle, "PurchaseOrder.bpel"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(orig)
	for _, r := range [][2]string{
		{`<while name="eachItem">`, `<flow name="eachItem">`},
		{`</while>`, `</flow>`},
		{`$i + 1`, `$j + 1`},
		{`$i + 1`, `$`},
		{`variable="poIn" createInstance="yes"`, `variable="poIn"`},
		{`partnerLink="crm"`, `partnerLink="ghost"`},
		{`operation="createWorkOrder"`, `operation="nope"`},
		{`location="crm.wsdl"`, `location="../../crm.wsdl"`},
		{`location="crm.wsdl"`, `location="/etc/passwd"`},
		{`<to variable="total"/>`, `<to>$total/x</to>`},
		{`keepSrcElementName="yes"`, `keepSrcElementName="yes" ignoreMissingFromData="yes"`},
		{`count($poIn.payload/po:items/po:item)`, `bpel:getVariableProperty('poIn', 'po:nope')`},
		{`count($poIn.payload/po:items/po:item)`, `count(`},
		{`<faultHandlers>`, `<faultHandlers><catchAll><exit/></catchAll>`},
		{`xmlns:po="urn:example:po"`, ``},
		{`</process>`, ``},
		{`<empty name="orderIsValid"/>`, `<scope><empty/></scope>`},
		{`<from>1</from>`, `<from><literal><x/></literal></from>`},
		{`messageType="po:purchaseOrderRequest"`, `element="po:purchaseOrder"`},
		{`<empty name="orderIsValid"/>`, `<extensionActivity><r:GET xmlns:r="` + xmldoc.NSBPEL4RestLight + `" uri="$bpelvar[total]" response="total" statusCode="total"/></extensionActivity>`},
		{`<empty name="orderIsValid"/>`, `<extensionActivity><r:POST xmlns:r="` + xmldoc.NSBPEL4RestLight + `" uri="$bpelvar[" request="poIn"><x/></r:POST></extensionActivity>`},
		{`<empty name="orderIsValid"/>`, `<extensionActivity><r:PATCH xmlns:r="` + xmldoc.NSBPEL4RestLight + `" uri="ftp://x"/></extensionActivity>`},
	} {
		f.Add(bytes.Replace(orig, []byte(r[0]), []byte(r[1]), 1))
	}
	f.Add([]byte(""))
	f.Add([]byte("<process/>"))
	f.Add([]byte(`<process xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable" name="PurchaseOrder" targetNamespace="urn:example:po:process"><empty/></process>`))

	files, err := os.ReadDir(exampleBundle)
	if err != nil {
		f.Fatal(err)
	}
	contents := map[string][]byte{}
	for _, ent := range files {
		b, err := os.ReadFile(filepath.Join(exampleBundle, ent.Name()))
		if err != nil {
			f.Fatal(err)
		}
		contents[ent.Name()] = b
	}
	payload := poMessage(f, "po-request.xml")

	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "purchase-order")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range contents {
			if name == "PurchaseOrder.bpel" {
				b = data
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		procs, err := loadBundle(dir)
		if err != nil {
			if procs != nil {
				t.Errorf("LoadBundle returned processes with error %v", err)
			}
			return
		}
		ip := &inProcessPartners{}
		e := NewEngine(Options{Partners: ip.bind})
		if err := e.Deploy(procs...); err != nil {
			return
		}
		for _, p := range procs {
			if len(p.Endpoints) == 0 {
				continue
			}
			ep := p.Endpoints[0]
			for _, op := range ep.Operations {
				if op.Name != "submitPurchaseOrder" {
					continue
				}
				// The instance must end soon after its context does: a while
				// loop checks it; nothing else may run unbounded.
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _, _ = submitCtx(ctx, e, p, payload.Copy())
				}()
				select {
				case <-done:
				case <-time.After(3 * time.Second):
					buf := make([]byte, 1<<16)
					buf = buf[:runtime.Stack(buf, true)]
					t.Fatalf("instance still running 3s after its context was canceled:\n%s", buf)
				}
				cancel()
			}
		}
	})
}

// submitCtx is submit with a context, for instances that may loop.
func submitCtx(ctx context.Context, e *Engine, p *interp.Version, payload *etree.Element) (*exchange.Message, *exchange.Fault, error) {
	ep := p.Endpoints[0]
	op := opNamed(ep, "submitPurchaseOrder")
	in := exchange.NewMessage(op.Input.Name)
	in.Parts["payload"] = payload
	var out *exchange.Message
	var fault *exchange.Fault
	ex := &exchange.Exchange{Endpoint: ep, Operation: op, Input: in, Respond: func(m *exchange.Message, f *exchange.Fault) { out, fault = m, f }}
	err := e.Dispatch(ctx, ex)
	return out, fault, err
}
