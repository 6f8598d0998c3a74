package process

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/process/interp"
)

const (
	eprWSA  = `xmlns:wsa="http://www.w3.org/2005/08/addressing"`
	eprSref = `xmlns:sref="http://docs.oasis-open.org/wsbpel/2.0/serviceref"`
)

// eprPartners records which binding each call went through: "deploy"
// (Options.Partners) or "assigned" (Options.AssignedPartners), with the
// address.
type eprPartners struct {
	mu    sync.Mutex
	calls []string
}

func (r *eprPartners) binder(kind string) func(*exchange.Endpoint) exchange.Partner {
	return func(ep *exchange.Endpoint) exchange.Partner {
		addr := ep.Address
		return exchange.PartnerFunc(func(_ context.Context, c *exchange.Call) (*exchange.Message, error) {
			r.mu.Lock()
			r.calls = append(r.calls, kind+":"+addr)
			r.mu.Unlock()
			return partnerAnswer(c)
		})
	}
}

const (
	rtInvoke     = `<invoke partnerLink="partner" operation="call" inputVariable="in" outputVariable="presp"/>`
	rtDeployCall = "<invoke partnerLink=\"partner\">\n      <service name=\"tns:PartnerService\" port=\"PartnerPort\"/>\n    </invoke>"
	rtPartnerPL  = `<partnerLink name="partner" partnerLinkType="tns:PartnerLT" partnerRole="partner"/>`
)

func assignTo(from, to string) string {
	return `<assign><copy>` + from + to + `</copy></assign>`
}

// scopedInvoke runs a scope n times (a serial forEach); the scope declares
// partner link "local" (no deploy.xml binding), assigns it an address
// the first time only, and invokes it each time.
func scopedInvoke(n int) string {
	return `<forEach counterName="i" parallel="no"><startCounterValue>1</startCounterValue><finalCounterValue>` +
		strconv.Itoa(n) + `</finalCounterValue><scope>
  <partnerLinks><partnerLink name="local" partnerLinkType="tns:PartnerLT" partnerRole="partner"/></partnerLinks>
  <sequence>
    <if><condition>$i = 1</condition>` + assignTo(`<from><literal>http://scoped.example/s</literal></from>`, `<to partnerLink="local"/>`) + `</if>
    <invoke partnerLink="local" operation="call" inputVariable="in" outputVariable="presp"/>
  </sequence>
</scope></forEach>`
}

// Copies to and from partner links in rt-invoke: the invoke goes where
// the copy said; a partner role with no endpoint faults.
func TestAssignEndpointReference(t *testing.T) {
	toPartner := `<to partnerLink="partner"/>`
	wsaLit := `<from><literal><sref:service-ref ` + eprSref + `><wsa:EndpointReference ` + eprWSA +
		`><wsa:Address>http://lit.example/x</wsa:Address></wsa:EndpointReference></sref:service-ref></literal></from>`
	readBack := `<from partnerLink="partner" endpointReference="partnerRole"/>`
	toOut := `<to>$out.payload/tns:a</to>`
	okOut := []string{"concat('ok:', $presp.payload/tns:a)", "concat('ok:', $out.payload/tns:a)"}
	tests := []struct {
		name      string
		edits     map[string][]string
		text      string // the request's tns:text
		want      string // tns:a of the reply
		wantFault string // local name of a bpel fault instead
		calls     []string
	}{
		{name: "deploy-time binding", want: "ok:P-A-1", calls: []string{"deploy:http://partner.example/partner"}},
		{name: "URL from the request", text: "http://client.example/p",
			edits: map[string][]string{"Test.bpel": {rtInvoke, assignTo(`<from>$in.payload/tns:text</from>`, toPartner) + rtInvoke}},
			want:  "ok:P-A-1", calls: []string{"assigned:http://client.example/p"}},
		{name: "service-ref literal",
			edits: map[string][]string{"Test.bpel": {rtInvoke, assignTo(wsaLit, toPartner) + rtInvoke}},
			want:  "ok:P-A-1", calls: []string{"assigned:http://lit.example/x"}},
		{name: "the last assignment wins",
			edits: map[string][]string{"Test.bpel": {rtInvoke, assignTo(wsaLit, toPartner) +
				assignTo(`<from><literal>http://second.example/y</literal></from>`, toPartner) + rtInvoke}},
			want: "ok:P-A-1", calls: []string{"assigned:http://second.example/y"}},
		{name: "partnerRole EPR read back",
			edits: map[string][]string{"Test.bpel": append([]string{rtInvoke, assignTo(wsaLit, toPartner) + assignTo(readBack, toOut)}, okOut...)},
			want:  "ok:http://lit.example/x"},
		{name: "partnerRole EPR of the deploy-time binding",
			edits: map[string][]string{"Test.bpel": append([]string{rtInvoke, assignTo(readBack, toOut)}, okOut...)},
			want:  "ok:http://partner.example/partner"},
		{name: "myRole EPR",
			edits: map[string][]string{"Test.bpel": append([]string{rtInvoke, assignTo(`<from partnerLink="client" endpointReference="myRole"/>`, toOut)}, okOut...)},
			want:  "ok:http://orchd.example:8/test"},
		{name: "never bound nor assigned", edits: map[string][]string{"deploy.xml": {rtDeployCall, ""}},
			wantFault: "uninitializedPartnerRole"},
		{name: "partnerRole EPR read while uninitialized",
			edits:     map[string][]string{"deploy.xml": {rtDeployCall, ""}, "Test.bpel": {rtInvoke, assignTo(readBack, toOut)}},
			wantFault: "uninitializedPartnerRole"},
		{name: "unbound, then assigned", text: "http://client.example/late",
			edits: map[string][]string{"deploy.xml": {rtDeployCall, ""},
				"Test.bpel": {rtInvoke, assignTo(`<from>$in.payload/tns:text</from>`, toPartner) + rtInvoke}},
			want: "ok:P-A-1", calls: []string{"assigned:http://client.example/late"}},
		{name: "scope-local partner link", edits: map[string][]string{"Test.bpel": {rtInvoke, scopedInvoke(1)}},
			want: "ok:P-A-1", calls: []string{"assigned:http://scoped.example/s"}},
		{name: "scope-local partner link is fresh each time its scope starts",
			edits:     map[string][]string{"Test.bpel": {rtInvoke, scopedInvoke(2)}},
			wantFault: "uninitializedPartnerRole", calls: []string{"assigned:http://scoped.example/s"}},
		{name: "an EPR with an empty address keeps the deploy-time binding (ODE's dynamic partner sample)",
			edits: map[string][]string{"Test.bpel": {rtInvoke, assignTo(`<from><literal><sref:service-ref `+eprSref+`><wsa:EndpointReference `+eprWSA+
				`><wsa:Address></wsa:Address></wsa:EndpointReference></sref:service-ref></literal></from>`, toPartner) + rtInvoke}},
			want: "ok:P-A-1", calls: []string{"deploy:http://partner.example/partner"}},
		{name: "a relative address keeps the deploy-time binding", text: "/processes/elsewhere",
			edits: map[string][]string{"Test.bpel": {rtInvoke, assignTo(`<from>$in.payload/tns:text</from>`, toPartner) + rtInvoke}},
			want:  "ok:P-A-1", calls: []string{"deploy:http://partner.example/partner"}},
		{name: "an empty address after an assigned one goes back to the binding", text: "",
			edits: map[string][]string{"Test.bpel": {rtInvoke, assignTo(wsaLit, toPartner) + assignTo(`<from>$in.payload/tns:text</from>`, toPartner) + rtInvoke}},
			want:  "ok:P-A-1", calls: []string{"deploy:http://partner.example/partner"}},
		{name: "an empty address with no binding", text: "",
			edits:     map[string][]string{"deploy.xml": {rtDeployCall, ""}, "Test.bpel": {rtInvoke, assignTo(`<from>$in.payload/tns:text</from>`, toPartner) + rtInvoke}},
			wantFault: "mismatchedAssignmentFailure"},
		{name: "not an address", text: "no url here",
			edits:     map[string][]string{"Test.bpel": {rtInvoke, assignTo(`<from>$in.payload/tns:text</from>`, toPartner) + rtInvoke}},
			wantFault: "mismatchedAssignmentFailure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			procs, err := loadBundle(editedBundle(t, "rt-invoke", tc.edits))
			if err != nil {
				t.Fatalf("LoadBundle: %v", err)
			}
			rec := &eprPartners{}
			e := NewEngine(Options{Partners: rec.binder("deploy"), AssignedPartners: func(ep *exchange.Endpoint, _ *partnerallow.List) exchange.Partner { return rec.binder("assigned")(ep) }, BaseURL: "http://orchd.example:8/"})
			if err := e.Deploy(procs...); err != nil {
				t.Fatal(err)
			}
			r := dispatch(t, e, procs[0], testReq("A-1", "3", tc.text))
			if tc.wantFault != "" {
				if r.fault == nil || r.fault.Name != interp.BpelFault(tc.wantFault) {
					t.Fatalf("want fault %s, got err=%v fault=%+v out=%v", tc.wantFault, r.err, r.fault, r.out)
				}
				if !strings.Contains(r.fault.Reason, "Test.bpel:") {
					t.Errorf("fault reason %q does not name the place", r.fault.Reason)
				}
			} else {
				if r.err != nil || r.fault != nil || r.out == nil {
					t.Fatalf("want a reply: err=%v fault=%+v", r.err, r.fault)
				}
				if got := childText(r.out.Part("payload"), "a"); got != tc.want {
					t.Errorf("reply a = %q, want %q", got, tc.want)
				}
			}
			if strings.Join(rec.calls, ",") != strings.Join(tc.calls, ",") {
				t.Errorf("calls %q, want %q", rec.calls, tc.calls)
			}
		})
	}
}

// Copies to or from partner links that cannot work are refused at deploy,
// naming file, line and element.
func TestEndpointReferenceRefused(t *testing.T) {
	tests := []struct {
		name  string
		edits map[string][]string
		errs  []string
	}{
		{name: "initializePartnerRole with no deploy.xml binding",
			edits: map[string][]string{"deploy.xml": {rtDeployCall, ""},
				"Test.bpel": {rtPartnerPL, `<partnerLink name="partner" partnerLinkType="tns:PartnerLT" partnerRole="partner" initializePartnerRole="yes"/>`}},
			errs: []string{"Test.bpel:10: <partnerLink>:", `initializePartnerRole="yes"`, `<invoke partnerLink="partner">`}},
		{name: "from partnerLink without endpointReference",
			edits: map[string][]string{"Test.bpel": {rtInvoke, "\n" + assignTo(`<from partnerLink="partner"/>`, `<to variable="presp" part="payload"/>`)}},
			errs:  []string{`Test.bpel:43: <from partnerLink="partner">: SA00032:`, `endpointReference="myRole" or "partnerRole"`}},
		{name: "myRole of a partner link without one",
			edits: map[string][]string{"Test.bpel": {rtInvoke, "\n" + assignTo(`<from partnerLink="partner" endpointReference="myRole"/>`, `<to variable="presp" part="payload"/>`)}},
			errs:  []string{`Test.bpel:43: <from partnerLink="partner">: SA00035:`, `partnerLink "partner" has no myRole`}},
		{name: "to a partner link without partnerRole",
			edits: map[string][]string{"Test.bpel": {rtInvoke, "\n" + assignTo(`<from>'http://h/'</from>`, `<to partnerLink="client"/>`)}},
			errs:  []string{`Test.bpel:43: <to partnerLink="client">: SA00037:`, `partnerLink "client" has no partnerRole`}},
		{name: "to an unknown partner link",
			edits: map[string][]string{"Test.bpel": {rtInvoke, "\n" + assignTo(`<from>'http://h/'</from>`, `<to partnerLink="ghost"/>`)}},
			errs:  []string{"Test.bpel:43: <to>:", `unknown partnerLink "ghost"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadBundle(editedBundle(t, "rt-invoke", tc.edits))
			if err == nil {
				t.Fatal("LoadBundle succeeded")
			}
			for _, w := range tc.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
