package main

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// compatBundle is a bundle written for Apache ODE (or an engine built on
// it) that breaks static analysis rules ODE did not enforce.
type compatBundle struct {
	name string
	// src is the bundle's folder; entry is what goes in its process
	// entries of deploy.xml (where the text COMPAT is, or after the
	// <dd:process ...> start tag of ODE's own bundles).
	src string
	// path, action and body are one request; want what its answer holds.
	path, action, body string
	want               []string
	// status is the answer's HTTP status (0: 200).
	status int
	// rules are the rules a strict deploy refuses it for.
	rules []string
}

func compatBundles() []compatBundle {
	env := func(body string) string {
		return `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>` + body + `</s:Body></s:Envelope>`
	}
	loan := func(name, amount string) string {
		return env(`<l:request xmlns:l="urn:example:loan-approval"><firstName>John</firstName><name>` + name + `</name><amount>` + amount + `</amount></l:request>`)
	}
	return []compatBundle{
		{name: "wso2-greeting", src: "testdata/compat/wso2-greeting",
			path: "/services/GreetingService", action: "urn:greet",
			body:  env(`<g:greet xmlns:g="http://wso2.org/bps/samples/Greeting/wsdl"><g:name>Ada</g:name></g:greet>`),
			want:  []string{"<wns:greeting>Hello, Ada</wns:greeting>"},
			rules: []string{"SA00056"}},
		// Doe, 7000: under 10000, the risk assessor (the bundle's other
		// process, over SOAP) says low: accepted. Smith, 7000: high.
		{name: "riftsaw-loan-low", src: "testdata/compat/riftsaw-loan",
			path: "/loanService/loanService", action: "request", body: loan("Doe", "7000"),
			want: []string{"<accept>yes</accept>"}, rules: []string{"SA00005", "SA00043"}},
		{name: "riftsaw-loan-high", src: "testdata/compat/riftsaw-loan",
			path: "/loanService/loanService", action: "request", body: loan("Smith", "7000"),
			want: []string{"<accept>no</accept>"}, rules: []string{"SA00005", "SA00043"}},
		// The invoke's correlation has no propertyAlias for the message
		// it sends: the call faults when it is made, naming what is
		// missing.
		{name: "ode-invoke-noalias", src: "testdata/compat/ode-invoke-noalias",
			path: "/jobs/submit", action: "submit",
			body:   env(`<j:submit xmlns:j="urn:example:jobs"><jobId>J1</jobId></j:submit>`),
			status: http.StatusInternalServerError,
			want:   []string{"correlationViolation", "no propertyAlias maps property {urn:example:jobs}jobId for message {urn:example:jobs}workMessage", "Jobs.bpel:22"},
			rules:  []string{"SA00021"}},
		// ODE's own TestAlarm: its imports name namespaces its WSDLs do
		// not have; the onAlarm (PT1S) answers before the PT15S wait.
		{name: "ode-TestAlarm", src: "../../testdata/ode-corpus/TestAlarm",
			path: "/ode/processes/HandleTimer/HandleTimer/Timer/Client", action: "",
			body:  env(`<start xmlns="http://ode.apache.org/example">start</start>`),
			want:  []string{"Envelope"},
			rules: []string{"SA00011"}},
	}
}

// copyCompatBundle copies b into deployDir with entry in its process
// entries and addr (orchd's own) for ORCHD_ADDR in its WSDLs.
func copyCompatBundle(t *testing.T, b compatBundle, deployDir, entry, addr string) string {
	t.Helper()
	dst := filepath.Join(deployDir, filepath.Base(b.src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(b.src)
	if err != nil {
		t.Fatalf("bundle %s: %v", b.src, err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(b.src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(data), "ORCHD_ADDR", addr)
		if e.Name() == "deploy.xml" {
			if strings.Contains(s, "COMPAT") {
				s = strings.ReplaceAll(s, "COMPAT", entry)
			} else if i := strings.Index(s, `fileName="HandleTimer-Timer.bpel">`); i >= 0 {
				at := i + len(`fileName="HandleTimer-Timer.bpel">`)
				s = s[:at] + strings.ReplaceAll(entry, "<orchd:compat>", `<orchd:compat xmlns:orchd="urn:orchd:deploy">`) + s[at:]
			} else {
				t.Fatalf("%s/deploy.xml: nowhere to put %q", b.src, entry)
			}
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// freeAddr is a loopback address with a port free a moment ago, for an
// orchd whose bundles call its own endpoints at an address they name.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Bundles written for Apache ODE, WSO2 BPS and RiftSaw deploy and answer
// over SOAP with serve --compat ode or <orchd:compat>ode</orchd:compat>
// (the static analysis findings ODE did not enforce are logged as
// warnings); without it, or with <orchd:compat>strict</orchd:compat> over
// --compat ode, they are refused with a message naming the setting, by
// serve and by orchd lint.
func TestCompatODE(t *testing.T) {
	t.Parallel() // long and mostly building or waiting: runs beside the other parallel tests at the end
	modes := []struct {
		name  string
		flags []string
		entry string
		serve bool
	}{
		{name: "flag", flags: []string{"--compat", "ode"}, serve: true},
		{name: "deploy.xml", entry: "<orchd:compat>ode</orchd:compat>", serve: true},
		{name: "strict", serve: false},
		{name: "deploy.xml strict over flag", flags: []string{"--compat", "ode"}, entry: "<orchd:compat>strict</orchd:compat>", serve: false},
	}
	client := &http.Client{Timeout: 60 * time.Second}
	for _, b := range compatBundles() {
		for _, m := range modes {
			t.Run(b.name+"/"+m.name, func(t *testing.T) {
				deployDir, addr := t.TempDir(), freeAddr(t)
				dir := copyCompatBundle(t, b, deployDir, m.entry, addr)

				lintArgs := append([]string{"lint"}, m.flags...)
				out, err := runOrchd(t, append(lintArgs, dir)...)
				if m.serve {
					if err != nil {
						t.Fatalf("orchd lint %v: %v\n%s", m.flags, err, out)
					}
					for _, r := range b.rules {
						if !strings.Contains(string(out), "warning: ") || !strings.Contains(string(out), r) {
							t.Errorf("orchd lint %v does not warn of %s:\n%s", m.flags, r, out)
						}
					}
				} else {
					checkRefusal(t, "orchd lint", string(out), b.rules)
					if err == nil {
						t.Errorf("orchd lint of a refused bundle exited 0:\n%s", out)
					}
				}

				o := startOrchd(t, append([]string{"--listen", addr, "--deploy", deployDir, "--data", t.TempDir(), "--deploy-poll", "0"}, m.flags...)...)
				if !m.serve {
					checkRefusal(t, "orchd serve", o.log(), b.rules)
					return
				}
				for _, r := range b.rules {
					if !strings.Contains(o.log(), "compat ode: ") || !strings.Contains(o.log(), r) {
						t.Errorf("orchd serve logged no compat ode warning of %s:\n%s", r, o.log())
					}
				}
				resp := post(t, client, o.base+b.path, "text/xml; charset=utf-8", b.action, []byte(b.body))
				if want := max(b.status, http.StatusOK); resp.status != want {
					t.Fatalf("status %d: %s\n%s", resp.status, resp.body, o.log())
				}
				for _, w := range b.want {
					if !strings.Contains(resp.body, w) {
						t.Errorf("answer lacks %q:\n%s", w, resp.body)
					}
				}
			})
		}
	}
}

// checkRefusal fails t unless out refuses the bundle for every rule, each
// finding naming the setting that would have deployed it.
func checkRefusal(t *testing.T, what, out string, rules []string) {
	t.Helper()
	for _, r := range rules {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, r+": ") && strings.Contains(line, "deploy with --compat ode or <orchd:compat>ode</orchd:compat>") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s does not refuse the bundle for %s naming the setting:\n%s", what, r, out)
		}
	}
}
