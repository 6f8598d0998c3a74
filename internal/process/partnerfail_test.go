package process

import (
	"fmt"

	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
)

// partnerFailProcess is a process around one failing invoke: it answers
// $out, whose tns:a starts as "none" and which the handlers of body set.
const partnerFailProcess = `<?xml version="1.0" encoding="UTF-8"?>
<process name="Test" targetNamespace="urn:test:process"
    xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable"
    xmlns:tns="urn:test" xmlns:ext="http://ode.apache.org/activityRecovery" xmlns:orchd="urn:orchd:fault">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="test.wsdl" namespace="urn:test"/>
  <partnerLinks>
    <partnerLink name="client" partnerLinkType="tns:TestLT" myRole="provider"/>
    <partnerLink name="partner" partnerLinkType="tns:PartnerLT" partnerRole="partner"/>
  </partnerLinks>
  <variables>
    <variable name="in" messageType="tns:req"/>
    <variable name="out" messageType="tns:resp"/>
    <variable name="presp" messageType="tns:resp"/>
  </variables>
  PROCESS_HANDLERS
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign><copy><from><literal><tns:resp><tns:a>none</tns:a></tns:resp></literal></from><to variable="out" part="payload"/></copy></assign>
    BODY
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>
</process>`

const pfInvoke = `<invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="presp"/>`

// pfSet is an assign of s to the answer.
func pfSet(s string) string {
	return `<assign><copy><from>` + s + `</from><to>$out.payload/tns:a</to></copy></assign>`
}

// pfScope is a scope with the given fault handlers around body.
func pfScope(handlers, body string) string {
	return `<scope><faultHandlers>` + handlers + `</faultHandlers>` + body + `</scope>`
}

// Outcomes of a partnerFail case: the answer's text, or one of these.
const (
	pfFault     = "fault activityFailure"
	pfSuspended = "suspended"
)

// TestPartnerFailureOneModel runs processes whose one invoke fails against
// the same partner, in-memory and persistent on a real bbolt store (with
// deploy.xml's default for uncaught failures, and with
// orchd:uncaughtFailure fault): a failure some handler of the process
// catches is caught the same in every mode; only one no handler catches
// suspends a persistent instance, or, when deploy.xml says so, ends it
// with the fault as an in-memory one ends.
func TestPartnerFailureOneModel(t *testing.T) {
	caught := func(a string) [3]string { return [3]string{a, a, a} }
	uncaught := [3]string{pfFault, pfSuspended, pfFault}
	tests := []struct {
		name           string
		handlers, body string // process-level handlers, the body around the invoke
		policy         string // ext:failureHandling children in deploy.xml
		want           [3]string
		state          [2]string // the stored state: default, uncaughtFailure fault
		calls          int32
	}{
		{name: "catch by name and element: the data names link, operation, address without credentials",
			body: pfScope(`<catch faultName="ext:activityFailure" faultVariable="f" faultElement="orchd:partnerFailure">`+
				pfSet(`concat($f/orchd:partnerLink, ' ', $f/orchd:operation, ' ', $f/orchd:address, ' ', contains($f/orchd:message, 'partner down'))`)+`</catch>`, pfInvoke),
			want: caught("partner call http://partner.example/partner true"), state: [2]string{"completed", "completed"}, calls: 1},
		{name: "catchAll of an enclosing scope",
			body: pfScope(`<catchAll>`+pfSet(`'outer'`)+`</catchAll>`, pfScope(`<catch faultName="tns:rejected">`+pfSet(`'rejected'`)+`</catch>`, pfInvoke)),
			want: caught("outer"), state: [2]string{"completed", "completed"}, calls: 1},
		{name: "catchAll of the process",
			handlers: `<faultHandlers><catchAll><sequence>` + pfSet(`'process'`) + `<reply partnerLink="client" operation="run" variable="out"/></sequence></catchAll></faultHandlers>`,
			body:     pfInvoke,
			want:     caught("process"), state: [2]string{"faulted", "faulted"}, calls: 1},
		{name: "retried first, then caught", policy: `<ext:retryFor>2</ext:retryFor><ext:retryDelay>0</ext:retryDelay>`,
			body: pfScope(`<catchAll>`+pfSet(`'caught'`)+`</catchAll>`, pfInvoke),
			want: caught("caught"), state: [2]string{"completed", "completed"}, calls: 3},
		{name: "a fault in a fault handler goes to the enclosing scope",
			body: pfScope(`<catchAll>`+pfSet(`'outer'`)+`</catchAll>`, pfScope(`<catchAll>`+pfInvoke+`</catchAll>`, `<throw faultName="tns:boom"/>`)),
			want: caught("outer"), state: [2]string{"completed", "completed"}, calls: 1},
		{name: "a fault in a termination handler ends that handler",
			body: pfScope(`<catchAll>`+pfSet(`'outer'`)+`</catchAll>`, `<flow><links><link name="l"/></links>
			  <scope><terminationHandler>`+pfInvoke+`</terminationHandler>
			    <sequence><empty><sources><source linkName="l"/></sources></empty><wait><for>'PT1H'</for></wait></sequence></scope>
			  <throw faultName="tns:boom"><targets><target linkName="l"/></targets></throw></flow>`),
			want: caught("outer"), state: [2]string{"completed", "completed"}, calls: 1},
		{name: "uncaught: the scope catches another fault",
			body: pfScope(`<catch faultName="tns:rejected">`+pfSet(`'rejected'`)+`</catch>`, pfInvoke),
			want: uncaught, state: [2]string{"suspended", "faulted"}, calls: 1},
		{name: "uncaught: a catch of the name with another element",
			body: pfScope(`<catch faultName="ext:activityFailure" faultVariable="f" faultElement="tns:problem">`+pfSet(`'wrong'`)+`</catch>`, pfInvoke),
			want: uncaught, state: [2]string{"suspended", "faulted"}, calls: 1},
		{name: "uncaught: in the fault handler of the only scope",
			body: pfScope(`<catchAll>`+pfInvoke+`</catchAll>`, `<throw faultName="tns:boom"/>`),
			want: uncaught, state: [2]string{"suspended", "faulted"}, calls: 1},
		{name: "uncaught: a default fault handler compensates and rethrows",
			body: `<scope><sequence><scope><compensationHandler><empty/></compensationHandler><empty/></scope>` + pfInvoke + `</sequence></scope>`,
			want: uncaught, state: [2]string{"suspended", "faulted"}, calls: 1},
		{name: "uncaught: retries spent first", policy: `<ext:retryFor>1</ext:retryFor><ext:retryDelay>0</ext:retryDelay>`,
			body: pfInvoke,
			want: uncaught, state: [2]string{"suspended", "faulted"}, calls: 2},
		{name: "uncaught with faultOnFailure: the fault in every mode", policy: `<ext:faultOnFailure>true</ext:faultOnFailure>`,
			body: pfInvoke,
			want: [3]string{pfFault, pfFault, pfFault}, state: [2]string{"faulted", "faulted"}, calls: 1},
	}
	modes := []struct {
		name       string
		persistent bool
		deployExt  string
	}{
		{"in-memory", false, ""},
		{"persistent", true, ""},
		{"persistent, uncaughtFailure fault", true, `<orchd:uncaughtFailure>fault</orchd:uncaughtFailure>`},
	}
	for _, tc := range tests {
		for mi, mode := range modes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				dir := pfBundle{handlers: tc.handlers, body: tc.body, persistent: mode.persistent, processExt: mode.deployExt, policy: tc.policy}.write(t)
				var calls atomic.Int32
				failing := exchange.PartnerFunc(func(context.Context, *exchange.Call) (*exchange.Message, error) {
					calls.Add(1)
					return nil, errors.New("partner down")
				})
				path := ""
				if mode.persistent {
					path = filepath.Join(t.TempDir(), "orchd.db")
				}
				e := deployPF(t, dir, path, failing)
				r := dispatch(t, e, e.Processes()[0], testReq("F-1", "1", ""))
				got := ""
				switch {
				case r.fault != nil:
					got = "fault " + r.fault.Name.Local
				case r.err != nil && strings.Contains(r.err.Error(), "suspended for an operator"):
					got = pfSuspended
				case r.err != nil:
					got = "error " + r.err.Error()
				case r.out != nil:
					got = childText(r.out.Part("payload"), "a")
				}
				if got != tc.want[mi] {
					t.Errorf("answer %q, want %q (%+v)", got, tc.want[mi], r)
				}
				if n := calls.Load(); n != tc.calls {
					t.Errorf("%d partner calls, want %d", n, tc.calls)
				}
				if !mode.persistent {
					return
				}
				list := storedInstances(t, e, mgmt.Query{})
				if len(list) != 1 {
					t.Fatalf("instances %+v", list)
				}
				if want := tc.state[mi-1]; list[0].State != want {
					t.Errorf("stored state %s, want %s (%s)", list[0].State, want, list[0].Fault)
				}
				if list[0].State == "suspended" && !strings.Contains(list[0].Fault, "partner down") {
					t.Errorf("suspended for %q, want the failure", list[0].Fault)
				}
			})
		}
	}
}

// pfBundle is a bundle of rt-invoke's WSDL (its partner address with
// credentials) around partnerFailProcess.
type pfBundle struct {
	handlers, body string // PROCESS_HANDLERS and BODY of partnerFailProcess
	persistent     bool
	processExt     string // deploy.xml elements of the <process>
	policy         string // ext:failureHandling children for the partner
	invokeExt      string // deploy.xml elements of the partner's <invoke>
	types          string // the WSDL's wsdl:types
}

// write writes the bundle into a temp folder and returns it.
func (pb pfBundle) write(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pf")
	copyDir(t, filepath.Join(bundlesDir, "rt-invoke"), dir)
	w := filepath.Join(dir, "test.wsdl")
	b, err := os.ReadFile(w)
	if err != nil {
		t.Fatal(err)
	}
	wsdl := strings.Replace(string(b), "http://partner.example/partner", "http://bob:pw-secret@partner.example/partner", 1)
	if pb.types != "" {
		wsdl = strings.Replace(wsdl, `  <wsdl:message name="req">`, pb.types+"\n"+`  <wsdl:message name="req">`, 1)
	}
	policy := ""
	if pb.policy != "" {
		policy = `<ext:failureHandling xmlns:ext="http://ode.apache.org/activityRecovery">` + pb.policy + `</ext:failureHandling>`
	}
	mem := "true"
	if pb.persistent {
		mem = "false"
	}
	dd := `<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:pns="urn:test:process" xmlns:tns="urn:test" xmlns:orchd="urn:orchd:deploy">
  <process name="pns:Test">
    <in-memory>` + mem + `</in-memory>` + pb.processExt + `
    <provide partnerLink="client"><service name="tns:TestService" port="TestPort"/></provide>
    <invoke partnerLink="partner"><service name="tns:PartnerService" port="PartnerPort"/>` + policy + pb.invokeExt + `</invoke>
  </process>
</deploy>`
	bpelText := strings.Replace(strings.Replace(partnerFailProcess, "BODY", pb.body, 1), "PROCESS_HANDLERS", pb.handlers, 1)
	for name, text := range map[string]string{"test.wsdl": wsdl, "Test.bpel": bpelText, "deploy.xml": dd} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A guarded call in flight when orchd stopped may or may not have
// reached the partner: recovery suspends the instance for an operator
// and does not call again, even where a handler of the process would
// catch a partner's failure (that handler is for the partner's
// failures, not orchd's). The stop is a copy of the store taken while
// the call is out (the checkpoint before it is committed: the instance
// answered its client first, so the store holds it; a new instance not
// yet answered is not stored before its calls).
func TestRecoveredCallInFlightSuspendsEvenWhenCaught(t *testing.T) {
	body := `<reply partnerLink="client" operation="run" variable="out"/>` +
		pfScope(`<catchAll>`+pfSet(`'caught'`)+`</catchAll>`, pfInvoke) + `<exit/>`
	dir := pfBundle{body: body, persistent: true}.write(t)
	path := filepath.Join(t.TempDir(), "orchd.db")
	called, hold := make(chan struct{}), make(chan struct{})
	e1 := deployPF(t, dir, path, func(ctx context.Context, _ *exchange.Call) (*exchange.Message, error) {
		close(called)
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return nil, errors.New("released")
	})
	done := make(chan clientResult, 1)
	go func() { done <- dispatch(t, e1, e1.Processes()[0], testReq("C-1", "1", "")) }()
	<-called
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	close(hold)
	<-done

	var calls atomic.Int32
	e2 := deployPF(t, dir, copyPath, func(context.Context, *exchange.Call) (*exchange.Message, error) {
		calls.Add(1)
		return nil, errors.New("partner down")
	})
	rec, err := e2.Recover(context.Background())
	if err != nil || rec.Resumed != 1 {
		t.Fatalf("recover: %+v %v", rec, err)
	}
	var list []*mgmt.InstanceDetail
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		list = storedInstances(t, e2, mgmt.Query{})
		if len(list) == 1 && list[0].State != "running" {
			break
		}
	}
	if len(list) != 1 || list[0].State != "suspended" || !strings.Contains(list[0].Fault, "may or may not have reached the partner") {
		t.Fatalf("after recovery: %+v", list)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the call that may have happened was sent again (%d calls)", n)
	}
}

// deployPF deploys the bundle in dir on an engine with a bbolt store at
// path (none when path is ""), its partner calls answered by call.
func deployPF(t *testing.T, dir, path string, call exchange.PartnerFunc) *Engine {
	t.Helper()
	return deployPartners(t, dir, path, func(*exchange.Endpoint) exchange.Partner { return call })
}

// deployPartners is deployPF with partners bound by partners.
func deployPartners(t *testing.T, dir, path string, partners func(*exchange.Endpoint) exchange.Partner) *Engine {
	t.Helper()
	procs, err := loadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Partners: partners}
	if path != "" {
		st, err := persist.Open(path, persist.Options{MaxBatchDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts.Store = st
	}
	e := NewEngine(opts)
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e
}

// orchd:uncaughtFailure takes suspend or fault; anything else is refused
// at deploy, naming the element and its line.
func TestUncaughtFailureValue(t *testing.T) {
	for _, v := range []string{"suspend", "fault", "retry"} {
		dir := pfBundle{body: pfInvoke, persistent: true, processExt: `<orchd:uncaughtFailure>` + v + `</orchd:uncaughtFailure>`}.write(t)
		procs, err := loadBundle(dir)
		switch {
		case v == "retry":
			if err == nil || !strings.Contains(err.Error(), "deploy.xml:3") || !strings.Contains(err.Error(), `<orchd:uncaughtFailure>: want suspend or fault, not "retry"`) {
				t.Errorf("%s: %v", v, err)
			}
		case err != nil:
			t.Errorf("%s: %v", v, err)
		case procs[0].FaultUncaught != (v == "fault"):
			t.Errorf("%s: FaultUncaught %v", v, procs[0].FaultUncaught)
		}
	}
}

// pfRespTypes declares tns:resp with an xsd:int child a.
const pfRespTypes = `  <wsdl:types><xsd:schema targetNamespace="urn:test" elementFormDefault="qualified">
    <xsd:element name="resp"><xsd:complexType><xsd:sequence><xsd:element name="a" type="xsd:int"/></xsd:sequence></xsd:complexType></xsd:element>
  </xsd:schema></wsdl:types>`

// A partner's answer that its schema refuses is bpel:invalidVariables at
// the invoke, caught the same in-memory and persistent, by default and
// with <orchd:validateReplies/>; deploy.xml's "no", in the invoke or for
// the whole process, takes it as data.
func TestValidateReplies(t *testing.T) {
	body := pfScope(`<catch faultName="bpel:invalidVariables" xmlns:bpel="http://docs.oasis-open.org/wsbpel/2.0/process/executable">`+
		pfSet(`'invalid'`)+`</catch>`, `<sequence>`+pfInvoke+pfSet(`concat('ok:', $presp.payload/tns:a)`)+`</sequence>`)
	tests := []struct {
		a                  string // the partner's tns:a
		invokeExt, procExt string
		want               string
	}{
		{a: "42", want: "ok:42"},
		{a: "42", invokeExt: `<orchd:validateReplies/>`, want: "ok:42"},
		{a: "forty-two", want: "invalid"},
		{a: "forty-two", invokeExt: `<orchd:validateReplies/>`, want: "invalid"},
		{a: "forty-two", invokeExt: `<orchd:validateReplies>no</orchd:validateReplies>`, want: "ok:forty-two"},
		{a: "forty-two", procExt: `<orchd:validateReplies>no</orchd:validateReplies>`, want: "ok:forty-two"},
		{a: "forty-two", procExt: `<orchd:validateReplies>no</orchd:validateReplies>`, invokeExt: `<orchd:validateReplies>yes</orchd:validateReplies>`, want: "invalid"},
		{a: "forty-two", procExt: `<orchd:compat>ode</orchd:compat>`, want: "ok:forty-two"},
	}
	for _, tc := range tests {
		for _, persistent := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s%s/persistent=%v", tc.a, tc.procExt, tc.invokeExt, persistent), func(t *testing.T) {
				pb := pfBundle{body: body, persistent: persistent, types: pfRespTypes, invokeExt: tc.invokeExt, processExt: tc.procExt}
				path := ""
				if persistent {
					path = filepath.Join(t.TempDir(), "orchd.db")
				}
				e := deployPF(t, pb.write(t), path, func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
					resp := etree.NewElement("r:resp")
					resp.CreateAttr("xmlns:r", nsTest)
					resp.CreateElement("r:a").SetText(tc.a)
					m := exchange.NewMessage(c.Operation.Output.Name)
					m.Parts["payload"] = resp
					return m, nil
				})
				r := dispatch(t, e, e.Processes()[0], testReq("V-1", "1", ""))
				if r.err != nil || r.out == nil {
					t.Fatalf("%+v", r)
				}
				if got := childText(r.out.Part("payload"), "a"); got != tc.want {
					t.Errorf("answer %q, want %q", got, tc.want)
				}
			})
		}
	}
	// Without a schema for the reply message, the default takes the
	// answer as it comes; insisting on the check refuses the bundle.
	if _, err := loadBundle(pfBundle{body: body}.write(t)); err != nil {
		t.Errorf("no schema, default: %v", err)
	}
	// A value other than yes or no is refused naming the element.
	dir := pfBundle{body: body, types: pfRespTypes, invokeExt: `<orchd:validateReplies>maybe</orchd:validateReplies>`}.write(t)
	if _, err := loadBundle(dir); err == nil || !strings.Contains(err.Error(), `deploy.xml:5: <orchd:validateReplies>: want yes or no (empty: yes), not "maybe"`) {
		t.Errorf("validateReplies maybe: %v", err)
	}
	dir = pfBundle{body: body, invokeExt: `<orchd:validateReplies/>`}.write(t)
	if _, err := loadBundle(dir); err == nil || !strings.Contains(err.Error(), "orchd:validateReplies: the output message of partner.call has no schema") {
		t.Errorf("validateReplies without a schema: %v", err)
	}
}
