package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/htclient"
)

// The interop test builds clients with four SOAP toolkits nobody here
// wrote, each from the running orchd's ?wsdl, and calls every operation
// of the example processes (./deploy) through them. It runs with
// ORCHD_INTEROP=1 (make interop, which installs the toolkits) and then
// fails, rather than skips, when a toolkit is missing:
//
//   - zeep (Debian's python3-zeep), run by ORCHD_INTEROP_PYTHON
//     (default /usr/bin/python3);
//   - PHP's SoapClient (php-cli, php-soap);
//   - node-soap, from the node_modules directory ORCHD_INTEROP_NODE_PATH;
//   - gSOAP's wsdl2h and soapcpp2, with g++ and libgsoap-dev.
//
// The bundles' own soap:address names a port nothing listens on, and
// orchd listens on another (not 8080), once over TLS: a client reaches
// orchd only if ?wsdl names the address the request reached.
//
// A zeep client of the WS-HumanTask client API, built from
// /services/HumanTaskClientAPIAdmin?wsdl, works the example expense
// approval's task (testdata/interop/htclient.py).

const interopTimeout = 5 * time.Minute

// interopClient runs one toolkit's client of a process.
type interopClient struct {
	name string
	// run calls every operation of kind (po, approval) at the service
	// of wsdl, with extra arguments, and returns what the client printed.
	run func(t *testing.T, wsdl, kind, id string, tls *interopTLS, extra ...string) string
}

// interopTLS is the CA clients trust over TLS.
type interopTLS struct{ caFile string }

// interopRun runs a command with a deadline, failing t with its output
// when it fails.
func interopRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), interopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// interopPython is the python3 the zeep clients run with.
func interopPython() string {
	if p := os.Getenv("ORCHD_INTEROP_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

func interopClients(t *testing.T) []interopClient {
	t.Helper()
	testdata, err := filepath.Abs(filepath.Join("testdata", "interop"))
	if err != nil {
		t.Fatal(err)
	}
	python := interopPython()
	nodePath := os.Getenv("ORCHD_INTEROP_NODE_PATH")
	var missing []string
	for _, c := range []struct{ what, name string }{{"python3", python}, {"php", "php"}, {"node", "node"}, {"wsdl2h", "wsdl2h"}, {"soapcpp2", "soapcpp2"}, {"g++", "g++"}} {
		if _, err := exec.LookPath(c.name); err != nil {
			missing = append(missing, c.what)
		}
	}
	if len(missing) == 0 {
		if err := exec.Command(python, "-c", "import zeep").Run(); err != nil {
			missing = append(missing, "zeep (python3-zeep)")
		}
		if out, _ := exec.Command("php", "-m").Output(); !strings.Contains(string(out), "soap") {
			missing = append(missing, "php-soap")
		}
		if _, err := os.Stat(filepath.Join(nodePath, "soap", "package.json")); nodePath == "" || err != nil {
			missing = append(missing, "node-soap (ORCHD_INTEROP_NODE_PATH="+nodePath+")")
		}
		if _, err := os.Stat("/usr/include/stdsoap2.h"); err != nil {
			missing = append(missing, "libgsoap-dev")
		}
	}
	if len(missing) > 0 {
		t.Fatalf("ORCHD_INTEROP is set but toolkits are missing: %s (make interop installs them)", strings.Join(missing, ", "))
	}
	return []interopClient{
		{"zeep", func(t *testing.T, wsdl, kind, id string, tls *interopTLS, extra ...string) string {
			var env []string
			if tls != nil {
				env = append(env, "REQUESTS_CA_BUNDLE="+tls.caFile)
			}
			return interopRun(t, testdata, env, python, append([]string{"client.py", wsdl, kind, id}, extra...)...)
		}},
		{"php", func(t *testing.T, wsdl, kind, id string, tls *interopTLS, extra ...string) string {
			var env []string
			if tls != nil {
				env = append(env, "ORCHD_INTEROP_CA="+tls.caFile)
			}
			return interopRun(t, testdata, env, "php", append([]string{"client.php", wsdl, kind, id}, extra...)...)
		}},
		{"node-soap", func(t *testing.T, wsdl, kind, id string, tls *interopTLS, extra ...string) string {
			env := []string{"NODE_PATH=" + nodePath}
			if tls != nil {
				env = append(env, "NODE_EXTRA_CA_CERTS="+tls.caFile)
			}
			return interopRun(t, testdata, env, "node", append([]string{"client.js", wsdl, kind, id}, extra...)...)
		}},
		{"gsoap", func(t *testing.T, wsdl, kind, id string, tls *interopTLS, _ ...string) string {
			dir := t.TempDir()
			interopRun(t, dir, nil, "wsdl2h", "-o", "service.h", wsdl)
			interopRun(t, dir, nil, "soapcpp2", "-j", "-C", "-x", "-I/usr/share/gsoap/import", "service.h")
			main, proxy := "gsoap_po.cpp", "soapPurchaseOrderSOAPBindingProxy.cpp"
			if kind == "approval" {
				main, proxy = "gsoap_approval.cpp", "soapApprovalBindingProxy.cpp"
			}
			args := []string{"-I.", "-o", "client", filepath.Join(testdata, main), "soapC.cpp", proxy}
			var run []string
			if tls != nil {
				args = append([]string{"-DWITH_OPENSSL"}, append(args, "-lgsoapssl++", "-lssl", "-lcrypto")...)
				run = []string{tls.caFile}
			} else {
				args = append(args, "-lgsoap++")
			}
			interopRun(t, dir, nil, "nice", append([]string{"-n", "19", "g++"}, args...)...)
			return interopRun(t, dir, nil, filepath.Join(dir, "client"), append([]string{id}, run...)...)
		}},
	}
}

// wantLines fails t unless out has every line of want.
func wantLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			if strings.TrimSpace(l) == w {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no line %q in:\n%s", what, w, out)
		}
	}
}

// checkInterop calls every operation of the example processes at base
// with each client.
func checkInterop(t *testing.T, clients []interopClient, base, tag string, tls *interopTLS) {
	for _, c := range clients {
		for _, p := range []struct{ path, kind string }{
			{"/processes/PurchaseOrder", "po"},
			{"/processes/PurchaseOrderPersistent", "po"},
			{"/processes/OrderApproval", "approval"},
		} {
			t.Run(c.name+p.path, func(t *testing.T) {
				id := strings.ToUpper(tag + "-" + c.name + "-" + filepath.Base(p.path))
				out := c.run(t, base+p.path+"?wsdl", p.kind, id, tls)
				if p.kind == "po" {
					wantLines(t, c.name, out, "ack poId="+id+" status=ACCEPTED total=289.98")
					// The declared fault po:invalidOrder, with its detail.
					for _, l := range strings.Split(out, "\n") {
						if strings.HasPrefix(l, "fault ") {
							if !strings.HasSuffix(strings.Fields(l)[1], ":Server") || !strings.Contains(l, " poId="+id+"-BAD element=orderFault") {
								t.Errorf("%s: fault line %q, want a Server fault with the po:orderFault of %s-BAD", c.name, l, id)
							}
							return
						}
					}
					t.Errorf("%s: no fault line:\n%s", c.name, out)
					return
				}
				wantLines(t, c.name, out, "status requestId="+id+" status=PENDING", "status requestId="+id+" status=APPROVED")
			})
		}
	}
}

// interopDeploy copies the example bundles into a new deploy directory,
// their partners at crm and erp and their own soap:address at dead, and
// applies edits to the purchase order's files.
func interopDeploy(t *testing.T, crm, erp, dead string, edits map[string][][2]string) string {
	t.Helper()
	deploy := t.TempDir()
	for _, b := range []string{"purchase-order", "purchase-order-persistent", "order-approval"} {
		e := map[string][][2]string{}
		for name, eds := range edits {
			if b == "purchase-order" {
				e[name] = eds
			}
		}
		for _, w := range []string{"PurchaseOrder.wsdl", "approval.wsdl"} {
			if _, err := os.Stat(filepath.Join("../../deploy", b, w)); err == nil {
				e[w] = append(e[w], [2]string{"localhost:8080", dead})
			}
		}
		copyBundleFrom(t, filepath.Join("../../deploy", b), deploy, b, crm, erp, e)
	}
	return deploy
}

// TestInterop: see the comment at the top of this file.
func TestInterop(t *testing.T) {
	if os.Getenv("ORCHD_INTEROP") == "" {
		t.Skip("set ORCHD_INTEROP=1 (make interop installs the toolkits and does) to build clients with zeep, PHP, node-soap and gSOAP")
	}
	clients := interopClients(t)
	crm, erp := startMocks(t)
	dead := deadAddr(t)

	t.Run("http", func(t *testing.T) {
		replies := startRecorder(t) // answers the callback 202
		o := startOrchd(t, "--deploy", interopDeploy(t, crm, erp, dead, nil), "--data", t.TempDir(), "--partner-allow", replies.addr)
		checkInterop(t, clients, o.base, "h", nil)
		// zeep's WS-Addressing with a wsa:ReplyTo: orchd answers 202 and
		// sends the reply to the ReplyTo address.
		out := clients[0].run(t, o.base+"/processes/PurchaseOrder?wsdl", "po", "H-ZEEP-REPLYTO", nil, "replyto", "http://"+replies.addr+"/replies")
		wantLines(t, "zeep ReplyTo", out, "replyto-sent result=None")
		if !eventually(func() bool { return replies.count() == 1 }) {
			t.Fatalf("zeep's ReplyTo got %d callbacks, want 1\n%s", replies.count(), o.log())
		}
		_, body := replies.last()
		for _, w := range []string{"RelatesTo", "purchaseOrderAck", "H-ZEEP-REPLYTO", "ACCEPTED"} {
			if !strings.Contains(body, w) {
				t.Errorf("ReplyTo callback lacks %s:\n%s", w, body)
			}
		}
	})

	t.Run("tls", func(t *testing.T) {
		dir := t.TempDir()
		ca := newTestCA(t, "orchd interop CA")
		caFile := filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
			t.Fatal(err)
		}
		cert, key, _ := ca.issue(t, dir, "server", false)
		o := startOrchd(t, "--deploy", interopDeploy(t, crm, erp, dead, nil), "--data", t.TempDir(), "--tls-cert", cert, "--tls-key", key)
		checkInterop(t, clients, strings.Replace(o.base, "http://", "https://", 1), "s", &interopTLS{caFile: caFile})
	})

	t.Run("usernametoken", func(t *testing.T) {
		deploy := interopDeploy(t, crm, erp, dead, map[string][][2]string{"deploy.xml": {
			{`<deploy `, `<deploy xmlns:orchd="urn:orchd:deploy" `},
			{`<service name="po:PurchaseOrderService" port="PurchaseOrderPort"/>`, `<service name="po:PurchaseOrderService" port="PurchaseOrderPort"/>
      <orchd:usernameToken credentials="users.txt" passwordType="digest"/>`},
		}})
		if err := os.WriteFile(filepath.Join(deploy, "purchase-order", "users.txt"), []byte("ann:{PLAIN}ann-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir())
		for _, c := range clients {
			if c.name != "zeep" && c.name != "node-soap" {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				id := "U-" + strings.ToUpper(c.name)
				out := c.run(t, o.base+"/processes/PurchaseOrder?wsdl", "po", id, nil, "ann", "ann-secret")
				wantLines(t, c.name, out, "ack poId="+id+" status=ACCEPTED total=289.98")
				if !strings.Contains(out, "fault ") || !strings.Contains(out, "poId="+id+"-BAD element=orderFault") {
					t.Errorf("%s with a token: no po:invalidOrder fault:\n%s", c.name, out)
				}
			})
		}
		if n := strings.Count(o.log(), `msg="request refused: WS-Security"`); n != 0 {
			t.Errorf("orchd refused %d requests with a token:\n%s", n, o.log())
		}
	})

	// The WS-HumanTask client API through a zeep client built from its
	// ?wsdl: ann (a manager, HTTP Basic) finds the example's approval
	// task, eve (in no group) is refused its claim with the API's
	// illegalAccess fault, ann claims, starts and completes it, and the
	// process continues with her decision.
	t.Run("humantask", func(t *testing.T) {
		deploy, dir := t.TempDir(), t.TempDir()
		copyBundleFrom(t, "../../deploy/expense-approval", deploy, "expense-approval", crm, erp, nil)
		o := startOrchd(t, "--deploy", deploy, "--data", t.TempDir(), "--people-file", taskPeople(t, dir))
		expense(t, o.base, "I-ZEEP", "PT1H")
		testdata, err := filepath.Abs(filepath.Join("testdata", "interop"))
		if err != nil {
			t.Fatal(err)
		}
		out := interopRun(t, testdata, nil, interopPython(), "htclient.py", o.base+htclient.Path+"?wsdl", "I-ZEEP", "ann", "ann-secret", "eve", "eve-secret")
		wantLines(t, "zeep task client", out,
			"task name=ApproveExpense status=READY",
			"outsider-fault code=Client detail=illegalAccess",
			"info status=COMPLETED owner=ann comments=1",
			"output approved=true")
		waitUntil(t, "I-ZEEP's decision, APPROVED, in the process's status", func() bool {
			r := expenseStatus(t, o.base, "I-ZEEP")
			return r.status == 200 && strings.Contains(r.body, "APPROVED")
		})
	})
}
