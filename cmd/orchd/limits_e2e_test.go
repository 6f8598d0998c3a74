package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestInputLimits: the --max-* flags bound what a request may cost to
// parse. Over real HTTP, a request at each limit is served and one just over
// it gets a SOAP Client fault that names the limit and its value; the
// next request is served as usual.
func TestInputLimits(t *testing.T) {
	crm, erp := startMocks(t)
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", crm, erp, nil)
	o := startOrchd(t, "--deploy", deploy, "--max-attrs", "3", "--max-ns-decls", "4", "--max-depth", "6",
		"--max-elements", "40", "--max-value-bytes", "100", "--max-name-bytes", "40", "--max-header-bytes", "200")
	client := &http.Client{Timeout: 30 * time.Second}
	url := o.base + "/processes/PurchaseOrder"
	good := readWorkload(t, "po-request.xml")
	// edit puts s in place of the first occurrence of old.
	edit := func(old, s string) []byte { return bytes.Replace(good, []byte(old), []byte(s), 1) }
	r := strings.Repeat
	// The workload has 28 elements, 2 declarations on the Envelope, the
	// item fields at depth 6, and an empty Header. The partners' replies
	// are within the limits (their longest name has 31 bytes).
	header := func(n int) []byte { // a Header of n bytes
		var h strings.Builder
		for rest := n - len("<soapenv:Header></soapenv:Header>"); rest > 0; {
			k := max(min(rest-7, 50), 0)
			h.WriteString("<h>" + r("h", k) + "</h>")
			rest -= 7 + k
		}
		return edit("<soapenv:Header/>", "<soapenv:Header>"+h.String()+"</soapenv:Header>")
	}
	tests := []struct {
		limit    string
		at, over []byte
	}{
		{"attributes per element limit of 3",
			edit("<po:purchaseOrder>", `<po:purchaseOrder a="1" b="2" c="3">`), edit("<po:purchaseOrder>", `<po:purchaseOrder a="1" b="2" c="3" d="4">`)},
		{"namespace declarations per element limit of 4",
			edit(`xmlns:po=`, `xmlns:a="urn:a" xmlns:b="urn:b" xmlns:po=`), edit(`xmlns:po=`, `xmlns:a="urn:a" xmlns:b="urn:b" xmlns:c="urn:c" xmlns:po=`)},
		{"depth limit of 6",
			edit("<po:email>", "<po:email><!-- the depth is 4 -->"), edit("<po:unitPrice>19.99</po:unitPrice>", "<po:unitPrice>19.99<x/></po:unitPrice>")},
		{"elements per document limit of 40",
			edit("</po:shipTo>", "</po:shipTo>"+r("<po:note/>", 12)), edit("</po:shipTo>", "</po:shipTo>"+r("<po:note/>", 13))},
		{"text and attribute value length limit of 100",
			edit("Acme Widgets Ltd", r("A", 100)), edit("Acme Widgets Ltd", r("A", 101))},
		{"name length limit of 40",
			edit("</po:shipTo>", "</po:shipTo><po:"+r("n", 37)+"/>"), edit("</po:shipTo>", "</po:shipTo><po:"+r("n", 38)+"/>")},
		{"header size limit of 200", header(200), header(201)},
	}
	for _, tc := range tests {
		t.Run(tc.limit, func(t *testing.T) {
			checkAck(t, post(t, client, url, textXML, poAction, tc.at), map[string]string{"status": "ACCEPTED", "total": "322.48"})
			resp := post(t, client, url, textXML, poAction, tc.over)
			code, reason := faultCode(t, resp.body)
			if resp.status != http.StatusInternalServerError || code != "Client" {
				t.Errorf("over the limit: HTTP %d fault %q, want 500 Client", resp.status, code)
			}
			if !strings.Contains(reason, "input limit exceeded") || !strings.Contains(reason, tc.limit) {
				t.Errorf("reason %q does not name the %s", reason, tc.limit)
			}
			checkAck(t, post(t, client, url, textXML, poAction, good), map[string]string{"status": "ACCEPTED"})
		})
	}
}
