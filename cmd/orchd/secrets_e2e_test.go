package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// malformedAddresses are partner soap:address locations that do not
// parse as URLs, each carrying a password: the shapes whose parse error
// used to quote the whole address.
var malformedAddresses = []struct{ name, location string }{
	{"bad port", "http://bob:%s@127.0.0.1:notaport/crm"},
	{"bad escape", "http://bob:%s@127.0.0.1:1/crm%%zz"},
	{"space in host", "http://bob:%s@bad host:1/crm"},
	{"control char", "http://bob:%s@127.0.0.1:1/crm\x7f"},
	{"missing scheme", "bob:%s@127.0.0.1:1/crm"},
}

// TestMalformedPartnerPasswordRedacted: for each malformed partner
// address carrying a marker password, the real binary serves a request
// that calls the partner; the marker is in no client fault, log line,
// events file line, trace span, ?wsdl document, management API answer
// or `orchd lint` output.
func TestMalformedPartnerPasswordRedacted(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	for i, tc := range malformedAddresses {
		t.Run(tc.name, func(t *testing.T) {
			password := fmt.Sprintf("pw-M4rk3r-%d-7731", i)
			location := fmt.Sprintf(tc.location, password)
			deploy := t.TempDir()
			copyBundleFrom(t, "../../deploy/purchase-order-persistent", deploy, "po", "127.0.0.1:1", "127.0.0.1:1",
				map[string][][2]string{"crm.wsdl": {{"http://127.0.0.1:1/crm", location}}})
			seen := map[string]string{}

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, _ := exec.CommandContext(ctx, orchdBin, "lint", deploy).CombinedOutput()
			seen["orchd lint"] = string(out)
			out, _ = exec.CommandContext(ctx, orchdBin, "lint", "--json", deploy).CombinedOutput()
			seen["orchd lint --json"] = string(out)

			rc := startOTLPReceiver(t)
			events := filepath.Join(t.TempDir(), "events.jsonl")
			o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--admin-token-file", tokenFile(t, adminToken),
				"--events-file", events, "--otel-endpoint", rc.url)
			client := &http.Client{Timeout: 60 * time.Second}
			const path = "/processes/PurchaseOrderPersistent"
			r := post(t, client, o.base+path, textXML, poAction, readWorkload(t, "po-request.xml"))
			seen["the client's answer"] = r.body
			for _, doc := range []string{"", "=crm.wsdl", "=erp.wsdl", "=PurchaseOrderArtifacts.wsdl"} {
				_, seen["?wsdl"+doc] = getAuth(t, o.base+path+"?wsdl"+doc, "", "")
			}
			instances := sweepAPI(t, o.base, seen)
			waitUntil(t, "the spans at the collector", func() bool {
				rc.mu.Lock()
				defer rc.mu.Unlock()
				return len(rc.spans) > 0
			})
			time.Sleep(300 * time.Millisecond) // the later batches
			rc.mu.Lock()
			var spans strings.Builder
			for _, sp := range rc.spans {
				spans.WriteString(sp.String())
				spans.WriteByte('\n')
			}
			rc.mu.Unlock()
			seen["the trace spans"] = spans.String()
			o.stop(t)
			b, err := os.ReadFile(events)
			if err != nil {
				t.Fatal(err)
			}
			seen["the events file"] = string(b)
			seen["the log"] = o.log()
			noSecret(t, seen, password)
			if instances == 0 {
				t.Errorf("no instance listed: %s", seen["the instance list"])
			}
			if !strings.Contains(seen["the log"], "***@") {
				t.Errorf("the log does not name the partner's address, redacted:\n%s", seen["the log"])
			}
			if len(b) == 0 {
				t.Errorf("the events file is empty")
			}
		})
	}
}

// sweepAPI reads, with the admin token, the management API's instance
// list, each instance's detail, the process list and the bundle list of
// the orchd at base into seen, and returns how many instances it listed.
func sweepAPI(t *testing.T, base string, seen map[string]string) int {
	t.Helper()
	var page struct {
		Instances []struct {
			ID string `json:"id"`
		} `json:"instances"`
	}
	_, body := getAuth(t, base+"/api/v1/instances", adminToken, "")
	seen["the instance list"] = body
	if json.Unmarshal([]byte(body), &page) == nil {
		for _, in := range page.Instances {
			_, seen["instance "+in.ID] = getAuth(t, base+"/api/v1/instances/"+in.ID, adminToken, "")
		}
	}
	_, seen["the process list"] = getAuth(t, base+"/api/v1/processes", adminToken, "")
	_, seen["the bundle list"] = getAuth(t, base+"/api/v1/bundles", adminToken, "")
	return len(page.Instances)
}

// noSecret fails t for each output of seen (what it is -> its text) that
// shows password.
func noSecret(t *testing.T, seen map[string]string, password string) {
	t.Helper()
	for what, text := range seen {
		if strings.Contains(text, password) {
			t.Errorf("%s shows the password:\n%.3000s", what, text)
		}
	}
}
