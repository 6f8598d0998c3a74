package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/etcdtest"
)

// TestClusterInProcessPersistentCall runs, on one orchd node with
// --cluster, a persistent process that calls another persistent process
// of the same node in process (internal/process's rt-call bundle, both
// processes made persistent) and then replies. With --cluster a new
// instance takes its stripe (one of the engine's 64, by a hash of its
// id) when its run starts, so the caller holds its stripe through the
// call, and the callee's new instance takes its own: with one mutex per
// stripe, a callee whose id hashes to the caller's stripe waits for the
// caller, which waits for it. Ids are random, so about one exchange in
// 64; 320 exchanges miss it with probability (63/64)^320 < 0.7%. A
// deadlock shows as an exchange with no answer within 15 s: the test
// then fails with the node's goroutines waiting for a stripe.
func TestClusterInProcessPersistentCall(t *testing.T) {
	ec := etcdtest.Start(t, 1)
	deploy := t.TempDir()
	copyBundleFrom(t, "../../internal/process/testdata/bundles/rt-call", deploy, "rt-call", "", "", map[string][][2]string{
		"deploy.xml": {{"<in-memory>true</in-memory>", ""}},
	})
	o := startClusterNode(t, ec, deploy, "stripe", "a", "--debug-addr", "127.0.0.1:0")
	client := &http.Client{Timeout: 15 * time.Second}
	const n = 320
	for i := range n {
		id := fmt.Sprintf("S-%d", i)
		body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
			`<tns:req xmlns:tns="urn:test"><tns:id>` + id + `</tns:id><tns:n>1</tns:n><tns:text></tns:text></tns:req>` +
			`</soapenv:Body></soapenv:Envelope>`
		resp, err := client.Post(o.base+"/test", textXML, strings.NewReader(body))
		if err != nil {
			t.Fatalf("exchange %d of %d: %v\nthe node's goroutines in a stripe's lock:\n%s", i+1, n, err, stripeWaiters(t, o))
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := "caller:callee:" + id; resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Fatalf("exchange %d: %d %s; want %s", i+1, resp.StatusCode, b, want)
		}
	}
}

// stripeWaiters returns the goroutines of o's dump (--debug-addr) that
// wait in the engine's stripe lock, with the stacks that lead there.
func stripeWaiters(t *testing.T, o *orchd) string {
	t.Helper()
	resp, err := http.Get("http://" + o.pprofAddr(t) + "/debug/pprof/goroutine?debug=2")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, g := range strings.Split(string(b), "\n\n") {
		if strings.Contains(g, "stripes).lock") || strings.Contains(g, "localPartner).Invoke") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
