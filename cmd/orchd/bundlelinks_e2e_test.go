package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rssLimit is the resident size past which the bundle link test kills
// orchd: a regression that reads /dev/zero whole fails the test rather
// than the machine.
const rssLimit = 768 << 20

// rss is the resident size of process pid in bytes, or -1.
func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// watchRSS kills o with SIGKILL once its resident size passes rssLimit
// and reports it on the returned channel (closed when the test ends).
func watchRSS(t *testing.T, o *orchd) <-chan int64 {
	t.Helper()
	over := make(chan int64, 1)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if n := rss(o.cmd.Process.Pid); n > rssLimit {
					_ = o.cmd.Process.Signal(syscall.SIGKILL)
					over <- n
					return
				}
			}
		}
	}()
	return over
}

// linkedBundle writes bundle name whose WSDL imports the schema
// schema.xsd, then makes schema.xsd a symbolic link to target.
func linkedBundle(t *testing.T, deploy, name, target string) {
	t.Helper()
	dir := filepath.Join(deploy, "."+name) // dot folders are not watched: the link is in place before the bundle appears
	writeProcess(t, dir, name, "127.0.0.1:1", strings.ReplaceAll(versionedBody, "TAG", name), true)
	bundle := filepath.Join(dir, name)
	w := filepath.Join(bundle, "e2e.wsdl")
	b, err := os.ReadFile(w)
	if err != nil {
		t.Fatal(err)
	}
	const types = `<wsdl:types><xsd:schema targetNamespace="urn:e2e" elementFormDefault="qualified">`
	if !strings.Contains(string(b), types) {
		t.Fatal("the test WSDL has no types to import into")
	}
	b = []byte(strings.Replace(string(b), types, types+`<xsd:import namespace="urn:linked" schemaLocation="schema.xsd"/>`, 1))
	if err := os.WriteFile(w, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(bundle, "schema.xsd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bundle, filepath.Join(deploy, name)); err != nil {
		t.Fatal(err)
	}
}

// TestHotDeployRefusesBundleLinks drops two bundles whose WSDL imports a
// schema that is a symbolic link: one to a file outside the bundle
// holding a marker, one to /dev/zero. Both are refused with a deploy
// error naming the file; the marker is never served at ?wsdl=; orchd
// stays up (and small) and deploys the next bundle.
func TestHotDeployRefusesBundleLinks(t *testing.T) {
	deploy := t.TempDir()
	const marker = "SECRET-MARKER-7f3a"
	outside := filepath.Join(t.TempDir(), "secret.xsd")
	if err := os.WriteFile(outside, []byte(`<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:linked"><!-- `+marker+` --></xsd:schema>`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", hotPoll)
	over := watchRSS(t, o)

	linkedBundle(t, deploy, "leak", outside)
	linkedBundle(t, deploy, "zero", "/dev/zero")
	for _, name := range []string{"leak", "zero"} {
		ok := eventually(func() bool {
			for _, l := range strings.Split(o.log(), "\n") {
				if strings.Contains(l, "bundle not deployed") && strings.Contains(l, name) &&
					strings.Contains(l, "schema.xsd") && strings.Contains(l, "symbolic link") {
					return true
				}
			}
			return false
		})
		select {
		case n := <-over:
			t.Fatalf("orchd killed at %d bytes resident: it reads the bundle's link to /dev/zero\n%s", n, o.log())
		default:
		}
		if !ok {
			t.Fatalf("bundle %s: no deploy error naming schema.xsd as a symbolic link\n%s", name, o.log())
		}
	}
	for _, q := range []string{"?wsdl=schema.xsd", "?wsdl"} {
		resp, err := http.Get(o.base + "/processes/leak" + q)
		if err != nil {
			t.Fatalf("GET %s: %v\n%s", q, err, o.log())
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), marker) {
			t.Fatalf("GET /processes/leak%s serves the file outside the bundle (%d)", q, resp.StatusCode)
		}
	}
	if strings.Contains(o.log(), marker) {
		t.Errorf("the log quotes the file outside the bundle")
	}

	writeVersion(t, deploy, "good", "V1", true)
	waitAnswer(t, o, "good", "a", "V1-started-ID")
	select {
	case n := <-over:
		t.Fatalf("orchd killed at %d bytes resident\n%s", n, o.log())
	default:
	}
}
