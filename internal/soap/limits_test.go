package soap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/xmlparse"
)

// limitEnvelope is a submitPurchaseOrder request with header content,
// extra attributes on the body element and extra content after its poId.
// Without extras it has 5 elements, the poId at depth 4.
func limitEnvelope(header, bodyAttrs, inner string) string {
	return `<s:Envelope xmlns:s="` + NS11 + `"><s:Header>` + header + `</s:Header><s:Body><po:purchaseOrder xmlns:po="urn:example:po"` +
		bodyAttrs + `><po:poId>PO-1</po:poId>` + inner + `</po:purchaseOrder></s:Body></s:Envelope>`
}

// limitCase is one limit with a request at the limit and one over it.
type limitCase struct {
	name     string // the limit's name in the fault
	lim      Limits
	max      string
	at, over string
}

func limitCases() []limitCase {
	r := strings.Repeat
	return []limitCase{
		{xmlparse.LimitAttrs, Limits{MaxAttrs: 3}, "3",
			limitEnvelope("", ` a="1" b="2" c="3"`, ""), limitEnvelope("", ` a="1" b="2" c="3" d="4"`, "")},
		{xmlparse.LimitNSDecls, Limits{MaxNSDecls: 3}, "3",
			limitEnvelope("", ` xmlns:a="urn:a" xmlns:b="urn:b"`, ""), limitEnvelope("", ` xmlns:a="urn:a" xmlns:b="urn:b" xmlns:c="urn:c"`, "")},
		{xmlparse.LimitElements, Limits{MaxElements: 10}, "10",
			limitEnvelope("", "", r("<x/>", 5)), limitEnvelope("", "", r("<x/>", 6))},
		{xmlparse.LimitDepth, Limits{MaxDepth: 6}, "6",
			limitEnvelope("", "", "<x><x><x/></x></x>"), limitEnvelope("", "", "<x><x><x><x/></x></x></x>")},
		{xmlparse.LimitValueBytes, Limits{MaxValueBytes: 64}, "64",
			limitEnvelope("", "", "<x>"+r("v", 64)+"</x>"), limitEnvelope("", "", "<x>"+r("v", 65)+"</x>")},
		{xmlparse.LimitValueBytes, Limits{MaxValueBytes: 64}, "64",
			limitEnvelope("", ` a="`+r("v", 64)+`"`, ""), limitEnvelope("", ` a="`+r("v", 65)+`"`, "")},
		{xmlparse.LimitNameBytes, Limits{MaxNameBytes: 20}, "20",
			limitEnvelope("", "", "<"+r("n", 20)+"/>"), limitEnvelope("", "", "<"+r("n", 21)+"/>")},
		// <s:Header> and </s:Header> are 21 bytes.
		{xmlparse.LimitHeaderBytes, Limits{MaxHeaderBytes: 100}, "100",
			limitEnvelope("<h>"+r("h", 72)+"</h>", "", ""), limitEnvelope("<h>"+r("h", 73)+"</h>", "", "")},
	}
}

// TestServerLimits: a request at each limit is served, one just over it
// gets a Client fault that names the limit and its value.
func TestServerLimits(t *testing.T) {
	const ct11 = "text/xml; charset=utf-8"
	for _, tc := range limitCases() {
		t.Run(tc.name+"="+tc.max, func(t *testing.T) {
			_, hs, _ := newTestServer(t, ServerOptions{Limits: tc.lim})
			r := post(t, hs.URL+"/po", ct11, "", tc.at)
			if r.status != http.StatusOK || r.env == nil || r.env.Fault() != nil {
				t.Fatalf("at the limit: HTTP %d %s", r.status, r.body)
			}
			r = post(t, hs.URL+"/po", ct11, "", tc.over)
			if r.status != http.StatusInternalServerError {
				t.Errorf("over the limit: HTTP %d, want 500", r.status)
			}
			f := r.fault(t)
			want := "input limit exceeded: "
			if f.Code != FaultClient || !strings.Contains(f.Reason, want) || !strings.Contains(f.Reason, "over the "+tc.name+" limit of "+tc.max) {
				t.Errorf("over the limit: fault %v %q, want Client naming the %s limit of %s", f.Code, f.Reason, tc.name, tc.max)
			}
		})
	}
}

// TestDecodeEnvelopeDefaultLimits: the zero Limits are xmlparse's
// defaults.
func TestDecodeEnvelopeDefaultLimits(t *testing.T) {
	var attrs strings.Builder
	for i := range xmlparse.DefaultMaxAttrs {
		attrs.WriteString(` a` + strconv.Itoa(i) + `="1"`)
	}
	if _, err := decodeEnvelopeBytes([]byte(limitEnvelope("", attrs.String(), "")), Limits{}); err != nil {
		t.Fatalf("%d attributes: %v", xmlparse.DefaultMaxAttrs, err)
	}
	_, err := decodeEnvelopeBytes([]byte(limitEnvelope("", attrs.String()+` one="more"`, "")), Limits{})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "over the attributes per element limit of 1000") {
		t.Errorf("%d attributes: %v", xmlparse.DefaultMaxAttrs+1, err)
	}
	big := limitEnvelope("<h>"+strings.Repeat("h", xmlparse.DefaultMaxHeaderBytes)+"</h>", "", "")
	if _, err := decodeEnvelopeBytes([]byte(big), Limits{}); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "header size limit of 65536") {
		t.Errorf("large header: %v", err)
	}
}

// TestClientLimits: a partner reply over a limit fails the call with an
// error that names the limit, the partner and the operation.
func TestClientLimits(t *testing.T) {
	reply := `<s:Envelope xmlns:s="` + NS11 + `"><s:Body><po:purchaseOrderAck xmlns:po="urn:example:po" a="1" b="2"><po:status>OK</po:status></po:purchaseOrderAck></s:Body></s:Envelope>`
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(reply))
	}))
	defer partner.Close()
	for _, tt := range []struct {
		max  int
		want string
	}{{2, ""}, {1, "over the attributes per element limit of 1"}} {
		c := NewClient(ClientOptions{Limits: Limits{MaxAttrs: tt.max}})
		ep := poEndpoint()
		ep.Address = partner.URL
		in := exchange.NewMessage(exchange.QName{})
		in.Parts["order"] = mustElement(t, `<po:purchaseOrder xmlns:po="urn:example:po"/>`)
		out, err := c.Partner(ep).Invoke(context.Background(), &exchange.Call{Operation: ep.Operations[0], Input: in})
		if tt.want == "" {
			if err != nil || out == nil || out.Part("ack") == nil {
				t.Errorf("MaxAttrs %d: %v %v", tt.max, out, err)
			}
			continue
		}
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), partner.URL) ||
			!strings.Contains(err.Error(), "submitPurchaseOrder") {
			t.Errorf("MaxAttrs %d: err = %v, want the limit, partner and operation", tt.max, err)
		}
	}
}

// TestFaultForPartnerAnswer: a partner answer that could not be used
// (malformed, over a limit) is a Server fault to the requester, while the
// same failure in the request is a Client fault.
func TestFaultForPartnerAnswer(t *testing.T) {
	limit := parseError(&xmlparse.LimitError{Limit: xmlparse.LimitAttrs, Max: 3, Line: 1})
	malformed := parseError(&xmlparse.SyntaxError{Line: 1, Msg: "bad"})
	for _, tt := range []struct {
		err  error
		want FaultCode
	}{
		{limit, FaultClient},
		{malformed, FaultClient},
		{fmt.Errorf("partner x op: %w: HTTP 200 OK: %w", ErrPartnerResponse, limit), FaultServer},
		{fmt.Errorf("partner x op: %w: HTTP 200 OK: %w", ErrPartnerResponse, malformed), FaultServer},
	} {
		if code, reason, _ := faultFor(tt.err, exchange.SOAP11); code != tt.want || reason != tt.err.Error() {
			t.Errorf("faultFor(%v) = %v %q, want %v", tt.err, code, reason, tt.want)
		}
	}
}
