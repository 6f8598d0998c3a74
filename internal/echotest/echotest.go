// Package echotest is the echo bundle the tests of the packages that
// deploy bundles share (hot deploy, the management backend, its client
// and the cluster view): a one-operation process whose run answers
// "TAG-<id>", with TAG chosen by the test, and then waits (an instance
// to list and act on) for a second run with the same id, which it
// answers "TAG-done-<id>"; in memory or persistent. And the SOAP call
// of run on loopback. It is for tests only; it imports nothing of orchd.
package echotest

import (
	"embed"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

//go:embed bundle
var files embed.FS

// Path is the echo process's endpoint path.
const Path = "/processes/echo"

// Write puts the echo bundle into dir/name: its process answers run
// with tag, in memory or persistent.
func Write(t testing.TB, dir, name, tag string, inMemory bool) {
	t.Helper()
	target := filepath.Join(dir, name)
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	mem := "false"
	if inMemory {
		mem = "true"
	}
	r := strings.NewReplacer("TAG", tag, "INMEMORY", mem)
	for _, f := range []string{"echo.wsdl", "echo.bpel", "deploy.xml"} {
		b, err := files.ReadFile("bundle/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(target, f), []byte(r.Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Call posts run(id) to the echo endpoint under base (scheme://host:port)
// and returns the answer's a; an answer other than 200 is returned as
// its status and body ("404 Not Found: ...").
func Call(t testing.TB, base, id string) string {
	t.Helper()
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<tns:req xmlns:tns="urn:hotdeploy"><tns:id>` + id + `</tns:id></tns:req></soapenv:Body></soapenv:Envelope>`
	req, err := http.NewRequest(http.MethodPost, base+Path, strings.NewReader(env))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `"urn:hotdeploy#run"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.Status + ": " + string(b)
	}
	_, a, _ := strings.Cut(string(b), "<tns:a>")
	a, _, _ = strings.Cut(a, "</tns:a>")
	return a
}
