package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/odemock"
	"github.com/orchd/orchd/internal/process/compile"
)

// Extensions are Go code linked into the binary (linkedExtensions), so
// this test runs serve's own wiring (runServer) in process with ODE's
// test extension bundle registered, and calls it over loopback SOAP.

// lockedBuffer collects runServer's log.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// extBody uses the test extension's doIt activity and doAssign operation
// (which writes <message><TestPart>Small</TestPart></message> to tmpVar,
// declared in a scope).
const extBody = `<sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <scope><variables><variable name="tmpVar" type="xsd:string"/></variables><sequence>
      <extensionActivity><ext:doIt/></extensionActivity>
      <assign>
        <copy><from>$in.payload/tns:id</from><to variable="tmpVar"/></copy>
        <extensionAssignOperation><ext:doAssign/></extensionAssignOperation>
        <copy><from>concat($in.payload/tns:id, ' ', $tmpVar)</from><to>$out.payload/tns:a</to></copy>
      </assign>
    </sequence></scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// writeExtProcess writes a bundle like writeProcess whose process declares
// namespace ns (prefix ext) mustUnderstand="yes".
func writeExtProcess(t *testing.T, deployDir, name, ns, body string) {
	t.Helper()
	writeProcess(t, deployDir, name, "127.0.0.1:1", body, true)
	f := filepath.Join(deployDir, name, name+".bpel")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `xmlns:tns="urn:e2e">`, `xmlns:tns="urn:e2e" xmlns:ext="`+ns+`">`, 1)
	s = strings.Replace(s, "  <partnerLinks>", `  <extensions><extension namespace="`+ns+`" mustUnderstand="yes"/></extensions>
  <partnerLinks>`, 1)
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServeRunsLinkedExtensions(t *testing.T) {
	deploy := t.TempDir()
	writeExtProcess(t, deploy, "Ext", odemock.TestExtensionNS, extBody)
	// The same process with a namespace nothing registers is skipped,
	// naming the file and line of its declaration.
	writeExtProcess(t, deploy, "Unknown", "urn:not-linked", extBody)
	logs := &lockedBuffer{}
	cfg := &serveConfig{listen: "127.0.0.1:0", deployDir: deploy, dataDir: t.TempDir(),
		idleTimeout: time.Second, shutdownTimeout: time.Second,
		extensions: compile.Extensions{odemock.TestExtensionNS: odemock.TestExtension()}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServer(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil))) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runServer: %v", err)
		}
	}()
	addrRE := regexp.MustCompile(`msg=serving addr=(\S+)`)
	var base string
	if !eventually(func() bool {
		m := addrRE.FindStringSubmatch(logs.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil
	}) {
		t.Fatalf("not serving:\n%s", logs.String())
	}
	r := callRun(t, base, "Ext", "X1", "1")
	if r.status != 200 || between(r.body, "<tns:a>", "</tns:a>") != "X1 Small" {
		t.Fatalf("Ext answered %d %s, want <a>X1 Small</a>\n%s", r.status, r.body, logs.String())
	}
	if l := logs.String(); !strings.Contains(l, "bundle skipped") ||
		!strings.Contains(l, `Unknown.bpel:6: <extension>: not supported yet: SA00009: extension urn:not-linked declared mustUnderstand=\"yes\"`) {
		t.Errorf("log does not report the unknown extension with file and line:\n%s", l)
	}
	if r := callRun(t, base, "Unknown", "X2", "1"); r.status == 200 {
		t.Errorf("the refused bundle answered: %s", r.body)
	}
}
