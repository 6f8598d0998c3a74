package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The memory budgets are tested on an orchd that runs under an address
// space limit (prlimit --as) and a Go memory limit, so a request that
// grows without bound ends that orchd with "fatal error: out of memory"
// (failing the test), never the machine. The race detector maps
// terabytes of shadow memory, so these orchds are built without it.

// memLimitAS is the address space an orchd under test may map: far over
// what the bounds let a run or an evaluation build, far under a machine.
const memLimitAS = "--as=2147483648"

var limitedBin struct {
	once sync.Once
	path string
	err  error
}

// limitedOrchd builds (once) the orchd run under limits, without -race.
func limitedOrchd(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Fatalf("prlimit (util-linux) is needed to run orchd under a memory limit: %v", err)
	}
	limitedBin.once.Do(func() {
		dir := filepath.Dir(orchdBin)
		limitedBin.path = filepath.Join(dir, "orchd-norace")
		out, err := exec.Command("go", "build", "-o", limitedBin.path, ".").CombinedOutput()
		if err != nil {
			limitedBin.err = &buildError{out: string(out), err: err}
		}
	})
	if limitedBin.err != nil {
		t.Fatal(limitedBin.err)
	}
	return limitedBin.path
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string {
	return "building orchd without -race: " + e.err.Error() + "\n" + e.out
}

// limitedCmd is orchd args under the address space limit and
// GOMEMLIMIT.
func limitedCmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command("prlimit", append([]string{memLimitAS, "--", limitedOrchd(t)}, args...)...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=512MiB")
	return cmd
}

// okBody answers at once: the exchange that shows the server goes on.
const okBody = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// doublingBody doubles a string each time round a loop, inside a scope
// whose catchAll would reply: the budget's fault must not reach it.
const doublingBody = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <assign><copy><from>'x'</from><to variable="out" part="payload"><query>tns:a</query></to></copy></assign>
    <scope>
      <faultHandlers><catchAll><reply partnerLink="client" operation="run" variable="out"/></catchAll></faultHandlers>
      <while><condition>true()</condition>
        <assign><copy><from>concat($out.payload/tns:a, $out.payload/tns:a)</from><to variable="out" part="payload"><query>tns:a</query></to></copy></assign>
      </while>
    </scope>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// hugeRangeBody evaluates an XPath 2.0 for over 20000 x 20000 items.
const hugeRangeBody = `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    ` + initOut + `
    <assign><copy><from expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0">string(count(for $i in 1 to 20000, $j in 1 to 20000 return 1))</from><to variable="out" part="payload"><query>tns:a</query></to></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`

// TestMemoryBudgets: a string variable doubled in a loop and an XPath 2.0
// for over 400 million items each get their named fault on an orchd
// under a 2 GiB address space limit, in-memory and persistent, and the
// server answers the next exchange.
func TestMemoryBudgets(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		inMemory   bool
		want       []string
	}{
		{"doubling/in-memory", doublingBody, true, []string{"instance stopped: orchd:memoryBudgetExceeded: variable out would hold", "over the bound of 16777216 for one variable (serve --max-variable-bytes sets it)"}},
		{"doubling/persistent", doublingBody, false, []string{"suspended for an operator: orchd:memoryBudgetExceeded: variable out would hold", "serve --max-variable-bytes"}},
		{"xpath2-for/in-memory", hugeRangeBody, true, []string{"subLanguageExecutionFault", "XPDY0130", "over the bound of 1000000 items (--max-items sets it)"}},
		{"xpath2-for/persistent", hugeRangeBody, false, []string{"subLanguageExecutionFault", "XPDY0130", "--max-items"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deploy := t.TempDir()
			writeProcess(t, deploy, "Grow", "127.0.0.1:1", tc.body, tc.inMemory)
			writeProcess(t, deploy, "Ok", "127.0.0.1:1", okBody, true)
			args := []string{"serve", "--listen", "127.0.0.1:0", "--deploy", deploy}
			if !tc.inMemory {
				args = append(args, "--data", filepath.Join(t.TempDir(), "orchd.db"))
			}
			o := startOrchdCmd(t, nil, limitedCmd(t, args...))
			r := callRunOrDead(t, o, "Grow")
			code, reason := faultCode(t, r.body)
			if r.status != 500 || code != "Server" {
				t.Errorf("%d %s %q, want a Server fault", r.status, code, reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(reason, w) {
					t.Errorf("the fault %q does not say %q", reason, w)
				}
			}
			if r := callRunOrDead(t, o, "Ok"); r.status != 200 {
				t.Errorf("the next exchange: %d %s, want 200", r.status, r.body)
			}
		})
	}
}

// callRunOrDead is callRun that, when orchd is gone (out of memory),
// fails with its log rather than the connection's error.
func callRunOrDead(t *testing.T, o *orchd, name string) response {
	t.Helper()
	r := callRunAsync(o.base, name, "M1", "1")
	if r.status == 0 {
		select {
		case err := <-o.done:
			o.done <- err
			log := o.log()
			if len(log) > 4000 {
				log = log[:4000] + "\n[...]"
			}
			t.Fatalf("POST %s: %s; orchd ended: %v\n%s", name, r.body, err, log)
		default:
			t.Fatalf("POST %s: %s", name, r.body)
		}
	}
	return r
}

// TestXPathMemoryBounds: orchd xpath, under the same limits, ends an
// evaluation over a bound with XPDY0130 naming the bound and its flag
// instead of running out of memory; the flags set the bounds.
func TestXPathMemoryBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"for product", []string{"count(for $i in 1 to 20000, $j in 1 to 20000 return 1)"}, "error\terr:XPDY0130\tthe evaluation builds a sequence of 1020000 items, over the bound of 1000000 items (--max-items sets it)"},
		{"range", []string{"count(1 to 40000000000)"}, "error\terr:XPDY0130\tthe range 1 to 40000000000 builds a sequence of more than 1000000 items, over the bound (--max-items sets it)"},
		{"string-join", []string{"string-length(string-join(for $i in 1 to 500000 return 'abcdefghijklmnopqrstuvwxyz0123456789', ''))"}, "error\terr:XPDY0130\tthe evaluation builds a string of 18000000 bytes, over the bound of 16777216 bytes (--max-string-bytes sets it)"},
		{"flag", []string{"--max-items", "10", "count(1 to 11)"}, "error\terr:XPDY0130\tthe range 1 to 11 builds a sequence of more than 10 items, over the bound (--max-items sets it)"},
		{"within", []string{"--max-items", "11", "count(1 to 11)"}, "xs:integer\t11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := limitedCmd(t, append([]string{"xpath"}, tc.args...)...).CombinedOutput()
			if got := strings.TrimSpace(string(out)); got != tc.want {
				if len(got) > 2000 {
					got = got[:2000] + "[...]"
				}
				t.Errorf("orchd xpath %q:\n got %s\nwant %s", tc.args, got, tc.want)
			}
		})
	}
}
