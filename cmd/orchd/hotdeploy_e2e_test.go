package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hot deploy tests run a real orchd watching a temporary deploy
// directory (polled every 50 ms) and change the bundles under it.

// versionedBody starts an instance on run (correlated on id), replies
// "TAG-started-<id>", then takes a second run for the same id and
// replies "TAG-done-<n>": TAG tells which version answered.
const versionedBody = `<sequence>
  <receive partnerLink="client" operation="run" variable="in" createInstance="yes">
    <correlations><correlation set="cs" initiate="yes"/></correlations>
  </receive>
  ` + initOut + `
  <assign><copy><from>concat('TAG-started-', $in.payload/tns:id)</from><to>$out.payload/tns:a</to></copy></assign>
  <reply partnerLink="client" operation="run" variable="out"/>
  <receive partnerLink="client" operation="run" variable="more">
    <correlations><correlation set="cs"/></correlations>
  </receive>
  <assign><copy><from>concat('TAG-done-', $more.payload/tns:n)</from><to>$out.payload/tns:a</to></copy></assign>
  <reply partnerLink="client" operation="run" variable="out"/>
</sequence>`

const hotPoll = "50ms"

// writeVersion writes bundle name with the versioned process tagged tag.
func writeVersion(t *testing.T, deploy, name, tag string, inMemory bool) {
	t.Helper()
	writeProcess(t, deploy, name, "127.0.0.1:1", strings.ReplaceAll(versionedBody, "TAG", tag), inMemory)
}

// answer calls run on process name and returns the reply's a (or the
// status and body when it is not a 200).
func answer(t *testing.T, base, name, id, n string) string {
	t.Helper()
	r := callRun(t, base, name, id, n)
	if r.status != http.StatusOK {
		return r.body
	}
	return between(r.body, "<tns:a>", "</tns:a>")
}

// waitAnswer calls until the answer is want (each call with a new id
// derived from id when fresh is set, as each starts an instance).
func waitAnswer(t *testing.T, o *orchd, name, id, want string) {
	t.Helper()
	var got string
	i := 0
	ok := eventually(func() bool {
		i++
		cid := id + "-" + strings.Repeat("x", i)
		got = answer(t, o.base, name, cid, "0")
		return got == strings.ReplaceAll(want, "ID", cid)
	})
	if !ok {
		t.Fatalf("no answer %q; last %q\n%s", want, got, o.log())
	}
}

// waitLog waits until orchd's log contains s.
func waitLog(t *testing.T, o *orchd, s string) {
	t.Helper()
	if !eventually(func() bool { return strings.Contains(o.log(), s) }) {
		t.Fatalf("no %q in the log\n%s", s, o.log())
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestHotDeployNewBundle(t *testing.T) {
	deploy := t.TempDir()
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", hotPoll)
	if r := callRun(t, o.base, "hd", "a", "1"); r.status != http.StatusNotFound {
		t.Fatalf("before the bundle: %d %s", r.status, r.body)
	}
	writeVersion(t, deploy, "hd", "V1", true)
	waitAnswer(t, o, "hd", "a", "V1-started-ID")
	if !exists(filepath.Join(deploy, "hd.deployed")) {
		t.Errorf("no marker hd.deployed after the deploy")
	}
	// The answer can come before the deploy's log line is read.
	waitLog(t, o, "version=1")
}

// redeployedWhileWaiting starts orchd with persistent version V1 of hd,
// starts instance "old" on it, and redeploys hd as V2.
func redeployedWhileWaiting(t *testing.T) (o *orchd, deploy, data string) {
	t.Helper()
	deploy, data = t.TempDir(), t.TempDir()
	writeVersion(t, deploy, "hd", "V1", false)
	o = startOrchd(t, "--deploy", deploy, "--data", data, "--deploy-poll", hotPoll)
	if got := answer(t, o.base, "hd", "old", "1"); got != "V1-started-old" {
		t.Fatalf("first call: %q", got)
	}
	writeVersion(t, deploy, "hd", "V2", false)
	// Wait for the log rather than calling: a call before the redeploy
	// would start another instance of version 1.
	waitLog(t, o, "version=2 path=/processes/hd")
	return o, deploy, data
}

func TestHotRedeployWaitingInstanceFinishesOnItsVersion(t *testing.T) {
	o, _, data := redeployedWhileWaiting(t)
	if got := answer(t, o.base, "hd", "old", "7"); got != "V1-done-7" {
		t.Fatalf("the waiting instance of version 1 answered %q\n%s", got, o.log())
	}
	if got := answer(t, o.base, "hd", "new2", "1"); got != "V2-started-new2" {
		t.Fatalf("a new instance answered %q", got)
	}
	if got := answer(t, o.base, "hd", "new2", "8"); got != "V2-done-8" {
		t.Fatalf("an instance of version 2 answered %q\n%s", got, o.log())
	}
	// No instance uses version 1 any more: it is dropped, with its archive.
	if !eventually(func() bool { return strings.Contains(o.log(), "msg=\"version dropped\"") }) {
		t.Fatalf("version 1 not dropped\n%s", o.log())
	}
	if exists(filepath.Join(data, "versions", "1-hd")) || !exists(filepath.Join(data, "versions", "2-hd")) {
		t.Errorf("archive after the drop: want 2-hd only")
	}
}

func TestHotRedeployBrokenKeepsServingVersion(t *testing.T) {
	deploy := t.TempDir()
	writeVersion(t, deploy, "hd", "V1", true)
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", hotPoll)
	if got := answer(t, o.base, "hd", "a", "1"); got != "V1-started-a" {
		t.Fatalf("first call: %q", got)
	}
	writeProcess(t, deploy, "hd", "127.0.0.1:1", `<sequence><receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
<bogus/></sequence>`, true)
	if !eventually(func() bool { return strings.Contains(o.log(), "bundle not deployed") }) {
		t.Fatalf("broken redeploy not reported\n%s", o.log())
	}
	if l := o.log(); !strings.Contains(l, "hd.bpel:") || !strings.Contains(l, "bogus") {
		t.Errorf("the error does not name file, line and element\n%s", l)
	}
	if got := answer(t, o.base, "hd", "b", "1"); got != "V1-started-b" {
		t.Fatalf("after the broken redeploy: %q", got)
	}
	// Fixing the bundle deploys it.
	writeVersion(t, deploy, "hd", "V3", true)
	waitAnswer(t, o, "hd", "c", "V3-started-ID")
}

func TestHotDeployWaitsForStableFolder(t *testing.T) {
	deploy := t.TempDir()
	// A poll 25 times the gap between writes: a writer stalled for two
	// polls looks finished (as to ODE's poller), and on a loaded machine
	// a 20 ms sleep can stretch past hotPoll's 50 ms.
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", "500ms")
	// Stage the bundle elsewhere, then copy it file by file, the BPEL
	// last and slowly, as a copy over the network would.
	stage := t.TempDir()
	writeVersion(t, stage, "hd", "V1", true)
	dir := filepath.Join(deploy, "hd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"deploy.xml", "e2e.wsdl"} {
		if err := copyFile(filepath.Join(stage, "hd", f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	bpel, err := os.ReadFile(filepath.Join(stage, "hd", "hd.bpel"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "hd.bpel"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(bpel); i += 64 {
		if _, err := f.Write(bpel[i:min(i+64, len(bpel))]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if exists(filepath.Join(deploy, "hd.deployed")) {
			t.Fatalf("deployed while half copied (%d of %d bytes)\n%s", i, len(bpel), o.log())
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, o, "hd", "a", "V1-started-ID")
	if strings.Contains(o.log(), "bundle not deployed") {
		t.Errorf("a deploy of the half-copied folder was tried\n%s", o.log())
	}
}

func TestHotDeployMarkerDeletionRedeploys(t *testing.T) {
	deploy := t.TempDir()
	writeVersion(t, deploy, "hd", "V1", true)
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", hotPoll)
	marker := filepath.Join(deploy, "hd.deployed")
	if !exists(marker) {
		t.Fatalf("no marker after the deploy at start")
	}
	// Polls pass with the marker in place: a bundle dropped in after the
	// start is deployed only by a poll (two, as it must be seen stable),
	// each of which also looked at hd.
	writeVersion(t, deploy, "probe", "P1", true)
	if !eventually(func() bool { return strings.Contains(o.log(), "bundle=probe") }) {
		t.Fatalf("the probe bundle was not deployed\n%s", o.log())
	}
	if strings.Contains(grepLines(o.log(), "bundle=hd"), "version=2") {
		t.Fatalf("redeployed with the marker in place\n%s", o.log())
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return strings.Contains(o.log(), "version=2") && exists(marker) }) {
		t.Fatalf("deleting the marker did not redeploy\n%s", o.log())
	}
	if got := answer(t, o.base, "hd", "a", "1"); got != "V1-started-a" {
		t.Fatalf("after the redeploy: %q", got)
	}
}

func TestHotUndeployRemovedFolder(t *testing.T) {
	deploy := t.TempDir()
	writeVersion(t, deploy, "hd", "V1", true)
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", hotPoll)
	if got := answer(t, o.base, "hd", "a", "1"); got != "V1-started-a" {
		t.Fatalf("first call: %q", got)
	}
	if err := os.RemoveAll(filepath.Join(deploy, "hd")); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return callRun(t, o.base, "hd", "b", "1").status == http.StatusNotFound }) {
		t.Fatalf("still served after its folder was removed\n%s", o.log())
	}
	if !eventually(func() bool { return !exists(filepath.Join(deploy, "hd.deployed")) }) {
		t.Errorf("marker of the removed bundle not deleted")
	}
}

func TestRestartResumesWaitingInstanceOnOldVersion(t *testing.T) {
	o, deploy, data := redeployedWhileWaiting(t)
	kill9(t, o)

	o2 := startOrchd(t, "--deploy", deploy, "--data", data, "--deploy-poll", hotPoll)
	if got := answer(t, o2.base, "hd", "old", "5"); got != "V1-done-5" {
		t.Fatalf("after the restart, the instance of version 1 answered %q\n%s", got, o2.log())
	}
	if got := answer(t, o2.base, "hd", "fresh", "1"); got != "V2-started-fresh" {
		t.Fatalf("after the restart, a new instance answered %q\n%s", got, o2.log())
	}
}

func TestHotDeployNamedVersionRetiresOlder(t *testing.T) {
	deploy := t.TempDir()
	stage := t.TempDir()
	writeVersion(t, stage, "hd", "V1", true)
	if err := os.Rename(filepath.Join(stage, "hd"), filepath.Join(deploy, "hd-1")); err != nil {
		t.Fatal(err)
	}
	o := startOrchd(t, "--deploy", deploy, "--deploy-poll", hotPoll)
	if got := answer(t, o.base, "hd", "a", "1"); got != "V1-started-a" {
		t.Fatalf("first call: %q", got)
	}
	// hd-2 serves the same path: ODE's naming retires hd-1 instead of
	// refusing the second bundle.
	writeVersion(t, stage, "hd", "V2", true)
	if err := os.Rename(filepath.Join(stage, "hd"), filepath.Join(deploy, "hd-2")); err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, o, "hd", "b", "V2-started-ID")
	if got := answer(t, o.base, "hd", "a", "2"); got != "V1-done-2" {
		t.Fatalf("the in-memory instance of hd-1 answered %q\n%s", got, o.log())
	}
}

// Undeploying a persistent process keeps its stored instances: once the
// process is deployed again, a waiting instance takes its message.
func TestUndeployKeepsStoredInstances(t *testing.T) {
	deploy, data := t.TempDir(), t.TempDir()
	writeVersion(t, deploy, "hd", "V1", false)
	o := startOrchd(t, "--deploy", deploy, "--data", data, "--deploy-poll", hotPoll)
	if got := answer(t, o.base, "hd", "old", "1"); got != "V1-started-old" {
		t.Fatalf("first call: %q", got)
	}
	if err := os.RemoveAll(filepath.Join(deploy, "hd")); err != nil {
		t.Fatal(err)
	}
	waitLog(t, o, "msg=undeployed")
	if r := callRun(t, o.base, "hd", "old", "2"); r.status != http.StatusNotFound {
		t.Fatalf("undeployed process answered %d %s", r.status, r.body)
	}
	writeVersion(t, deploy, "hd", "V1", false)
	waitLog(t, o, "version=2 path=/processes/hd")
	if got := answer(t, o.base, "hd", "old", "3"); got != "V1-done-3" {
		t.Fatalf("the stored instance after the redeploy answered %q\n%s", got, o.log())
	}
}
