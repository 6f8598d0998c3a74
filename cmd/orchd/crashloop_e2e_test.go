package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mockpartner"
	"github.com/orchd/orchd/internal/persist"
)

// The crash loop: mixed persistent load, SIGKILL at a random moment,
// restart, check the invariants, again and again. It is in make test with
// a bounded number of rounds; make soak runs the same load for longer.

const reliablePath = "/reliable"

// partnerLog is the partners' side of the story: how often each request
// reached them, by its unique id.
type partnerLog struct {
	mu                 sync.Mutex
	crm, erp, notified map[string]int
	// held: requests with these ids wait, once counted, until the
	// channel is closed or their client goes.
	held map[string]chan struct{}
}

func newPartnerLog() *partnerLog {
	return &partnerLog{crm: map[string]int{}, erp: map[string]int{}, notified: map[string]int{}, held: map[string]chan struct{}{}}
}

// hold makes the requests with id wait, once counted, until release is
// called or their client hangs up (orchd is killed): a call orchd is
// inside of, for as long as the test needs.
func (l *partnerLog) hold(id string) (release func()) {
	ch := make(chan struct{})
	l.mu.Lock()
	l.held[id] = ch
	l.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (l *partnerLog) count(m map[string]int, id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return m[id]
}

var (
	poIDRE = regexp.MustCompile(`poId>([^<]+)</`)
	owIDRE = regexp.MustCompile(`id>([^<]+)</`)
)

// recording counts each request under the id re finds in its body, then
// hands it to next (nil: answer 202, as a one-way partner does).
func (l *partnerLog) recording(m map[string]int, re *regexp.Regexp, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if sm := re.FindSubmatch(b); sm != nil {
			l.mu.Lock()
			m[string(sm[1])]++
			held := l.held[string(sm[1])]
			l.mu.Unlock()
			if held != nil {
				select {
				case <-held:
				case <-r.Context().Done():
					return
				}
			}
		}
		if next == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(w, r)
	})
}

// startRecordingPartners serves the CRM and ERP mock partners and a
// one-way notification partner, each counting the requests it gets.
func startRecordingPartners(t testing.TB) (crm, erp, notify string, log *partnerLog) {
	t.Helper()
	log = newPartnerLog()
	mp := mockpartner.New(nil)
	handlers := []http.Handler{
		log.recording(log.crm, poIDRE, mp.CRM()),
		log.recording(log.erp, poIDRE, mp.ERP()),
		log.recording(log.notified, owIDRE, nil),
	}
	addrs := make([]string, len(handlers))
	for i, h := range handlers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		addrs[i] = ln.Addr().String()
	}
	return addrs[0], addrs[1], addrs[2], log
}

// crashDeploy lays out the persistent PO, the approval example, and a
// persistent process whose one-way invoke goes through the outbox
// (RELIABLE). Without cleanup every instance stays in the store, to be
// counted; with it (the soak, whose store must not grow) completed ones
// are deleted, as the PO example does.
func crashDeploy(t *testing.T, crm, erp, notify string, cleanup bool) string {
	t.Helper()
	deploy := t.TempDir()
	clean := func(edits map[string][][2]string, in string) map[string][][2]string {
		if cleanup {
			edits["deploy.xml"] = append(edits["deploy.xml"], [2]string{in, `<cleanup on="success"/>` + in})
		}
		return edits
	}
	poEdits := map[string][][2]string{}
	if !cleanup {
		poEdits["deploy.xml"] = [][2]string{{`<cleanup on="success"/>`, ``}}
	}
	copyBundleFrom(t, "../../deploy/purchase-order-persistent", deploy, "po-persistent", crm, erp, poEdits)
	copyBundleFrom(t, "../../deploy/order-approval", deploy, "order-approval", crm, erp, clean(map[string][][2]string{}, "</process>"))
	copyBundleFrom(t, "../../internal/process/testdata/bundles/rt-oneway", deploy, "reliable", crm, erp, clean(map[string][][2]string{
		"deploy.xml": {{"<in-memory>true</in-memory>", "<in-memory>false</in-memory>"}},
		"test.wsdl": {
			{"http://partner.example/partner", "http://" + notify + "/notify"},
			{"http://localhost:8080/test", "http://localhost:8080" + reliablePath},
		},
	}, "</process>"))
	return deploy
}

// loadLedger is the clients' side: every request sent, and those that got
// a success answer (acknowledged).
type loadLedger struct {
	mu sync.Mutex
	// POs: poId -> acknowledged.
	pos map[string]bool
	// Approvals: requestId -> state of the conversation.
	approvals map[string]*approvalCase
	// undecided lists acknowledged approvals with a long timer that no
	// decision was sent for yet, oldest first.
	undecided []string
	// One-way sends: id -> acknowledged.
	oneway map[string]bool
	// cleanup: completed instances are deleted (crashDeploy's cleanup).
	cleanup bool
	// acks counts acknowledged exchanges of each kind.
	acks struct{ po, request, decision, oneway atomic.Int64 }
	// refused counts requests orchd answered without acknowledging them
	// (a fault, an unexpected status); refusals keeps the first few
	// answers (under mu), to show what they were.
	refused  atomic.Int64
	refusals []string
}

// maxRefusalSamples is how many refused answers a ledger keeps.
const maxRefusalSamples = 5

// refuse counts an answer that did not acknowledge the request to path
// and keeps it, if it is one of the first few.
func (l *loadLedger) refuse(path, body string) {
	l.refused.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.refusals) < maxRefusalSamples {
		if len(body) > 600 {
			body = body[:600] + "..."
		}
		l.refusals = append(l.refusals, path+": "+body)
	}
}

// acknowledged is the number of acknowledged exchanges of all kinds.
func (l *loadLedger) acknowledged() int64 {
	return l.acks.po.Load() + l.acks.request.Load() + l.acks.decision.Load() + l.acks.oneway.Load()
}

// requireProgress fails t unless the load did its work: every kind of
// exchange acknowledged at least minEach times, and the requests orchd
// answered without acknowledging them at most one in maxRefusedShare of
// all its answers. Without it, an orchd that refused every request would
// keep every invariant (nothing acknowledged, nothing owed).
func (l *loadLedger) requireProgress(t *testing.T, minEach int64, maxRefusedShare int64) {
	t.Helper()
	for _, k := range []struct {
		name string
		n    int64
	}{{"PO", l.acks.po.Load()}, {"approval request", l.acks.request.Load()}, {"decision", l.acks.decision.Load()}, {"one-way send", l.acks.oneway.Load()}} {
		if k.n < minEach {
			t.Errorf("%d %s exchanges acknowledged, want at least %d", k.n, k.name, minEach)
		}
	}
	refused := l.refused.Load()
	if answered := l.acknowledged() + refused; refused*maxRefusedShare > answered {
		l.mu.Lock()
		sample := strings.Join(l.refusals, "\n")
		l.mu.Unlock()
		t.Errorf("%d of %d answers refused the request (more than 1 in %d); the first:\n%s", refused, answered, maxRefusedShare, sample)
	}
}

type approvalCase struct {
	short    bool   // its timer fires within a round (PT0.5S); never decided
	acked    bool   // requestApproval answered PENDING
	decided  string // decision sent ("APPROVED" or "REJECTED"), if any
	decAcked bool   // and answered with that status
}

func newLedger() *loadLedger {
	return &loadLedger{pos: map[string]bool{}, approvals: map[string]*approvalCase{}, oneway: map[string]bool{}}
}

// mixedLoad drives orchd at base until stop is closed or a request fails
// at the transport level (orchd was killed): persistent POs, approvals
// (requests with short and long timers, decisions for earlier ones) and
// RELIABLE one-way sends, each with a unique id under prefix.
func mixedLoad(base, prefix string, led *loadLedger, stop <-chan struct{}, seed uint64) {
	send, closeIdle := newSender(base)
	defer closeIdle()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	worker := func(fn func(i int, rnd *rand.Rand) bool) {
		rnd := rand.New(rand.NewPCG(seed, uint64(len(prefix))))
		seed++
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stopped(); i++ {
				if !fn(i, rnd) {
					return
				}
			}
		}()
	}
	po := readPO()
	for w := 0; w < 2; w++ {
		w := w
		worker(func(i int, _ *rand.Rand) bool {
			_, answered := led.order(send, po, fmt.Sprintf("%s-PO%d-%d", prefix, w, i))
			return answered
		})
	}
	for w := 0; w < 2; w++ {
		w := w
		worker(func(i int, rnd *rand.Rand) bool {
			// Every other step decides an earlier acknowledged approval
			// with a long timer, if there is one.
			if i%2 == 1 {
				if id, c := led.takeUndecided(nil, rnd.IntN(2) == 0); c != nil {
					_, answered := led.decide(send, id, c)
					return answered
				}
			}
			short := rnd.IntN(3) == 0
			timeout := "PT1H"
			if short {
				timeout = "PT0.5S"
			}
			_, answered := led.request(send, fmt.Sprintf("%s-AP%d-%d", prefix, w, i), timeout, short, true)
			return answered
		})
	}
	worker(func(i int, _ *rand.Rand) bool {
		_, answered := led.notify(send, fmt.Sprintf("%s-OW-%d", prefix, i))
		return answered
	})
	wg.Wait()
}

// sendFunc posts body to path (with SOAPAction action, if any) and returns
// the answer and whether it was a 200; "" when orchd did not answer.
type sendFunc func(path, action string, body []byte) (string, bool)

// newSender returns a sendFunc posting to the orchd at base, and a
// function that closes its idle connections.
func newSender(base string) (sendFunc, func()) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	post := newPoster(client, base)
	return func(path, action string, body []byte) (string, bool) {
		b, code := post(path, action, body)
		return b, code == http.StatusOK
	}, client.CloseIdleConnections
}

// postFunc posts body to path (with SOAPAction action, if any) and
// returns the answer and its HTTP status; 0 when orchd did not answer.
type postFunc func(path, action string, body []byte) (string, int)

// newPoster returns a postFunc posting with client to the orchd at base.
func newPoster(client *http.Client, base string) postFunc {
	return func(path, action string, body []byte) (string, int) {
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", textXML)
		if action != "" {
			req.Header.Set("SOAPAction", action)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", 0
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return "", 0
		}
		return string(b), resp.StatusCode
	}
}

// takeUndecided removes the oldest acknowledged, undecided approval with a
// long timer whose id match accepts (nil: any) from the undecided list
// and records its decision (approve or reject); nil if there is none.
func (l *loadLedger) takeUndecided(match func(id string) bool, approve bool) (string, *approvalCase) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, id := range l.undecided {
		if match == nil || match(id) {
			l.undecided = append(l.undecided[:i:i], l.undecided[i+1:]...)
			c := l.approvals[id]
			c.decided = map[bool]string{true: "APPROVED", false: "REJECTED"}[approve]
			return id, c
		}
	}
	return "", nil
}

// order sends the PO request po with poId id and records it; it returns
// whether it was acknowledged, and whether orchd answered.
func (l *loadLedger) order(send sendFunc, po []byte, id string) (acked, answered bool) {
	l.mu.Lock()
	l.pos[id] = false
	l.mu.Unlock()
	body, ok := send(persistentPOPath, "", bytes.Replace(po, []byte("PO-000123"), []byte(id), 1))
	if ok && strings.Contains(body, "ACCEPTED") {
		l.mu.Lock()
		l.pos[id] = true
		l.mu.Unlock()
		l.acks.po.Add(1)
		return true, true
	} else if body != "" {
		l.refuse(persistentPOPath, body)
	}
	return false, body != ""
}

// notify sends a RELIABLE one-way request with id and records it; it
// returns whether it was acknowledged, and whether orchd answered.
func (l *loadLedger) notify(send sendFunc, id string) (acked, answered bool) {
	l.mu.Lock()
	l.oneway[id] = false
	l.mu.Unlock()
	body, ok := send(reliablePath, "", []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>`+
		`<tns:req xmlns:tns="urn:test"><tns:id>`+id+`</tns:id></tns:req></soapenv:Body></soapenv:Envelope>`))
	if ok && strings.Contains(body, "sent<") {
		l.mu.Lock()
		l.oneway[id] = true
		l.mu.Unlock()
		l.acks.oneway.Add(1)
		return true, true
	} else if body != "" {
		l.refuse(reliablePath, body)
	}
	return false, body != ""
}

// request sends requestApproval for id with timeout and records it
// (short: its timeout expires within a round, it is never decided). An
// acknowledged long one is queued for a decision unless queue is false.
// It returns whether it was acknowledged, and whether orchd answered.
func (l *loadLedger) request(send sendFunc, id, timeout string, short, queue bool) (acked, answered bool) {
	c := &approvalCase{short: short}
	l.mu.Lock()
	l.approvals[id] = c
	l.mu.Unlock()
	body, ok := send(approvalPath, `"urn:example:approval#requestApproval"`, approvalBody("requestApproval", id,
		"<appr:amount>10</appr:amount><appr:requester>ann</appr:requester><appr:timeout>"+timeout+"</appr:timeout>"))
	if ok && strings.Contains(body, "<appr:status>PENDING</appr:status>") {
		l.mu.Lock()
		c.acked = true
		if !short && queue {
			l.undecided = append(l.undecided, id)
		}
		l.mu.Unlock()
		l.acks.request.Add(1)
		return true, true
	} else if body != "" {
		l.refuse("requestApproval", body)
	}
	return false, body != ""
}

// decide sends the decision recorded in c for approval id and records
// it; it returns whether it was acknowledged, and whether orchd answered.
func (l *loadLedger) decide(send sendFunc, id string, c *approvalCase) (acked, answered bool) {
	body, ok := send(approvalPath, "", approvalBody("decide", id, "<appr:approved>"+strconv.FormatBool(c.decided == "APPROVED")+"</appr:approved><appr:approver>bob</appr:approver>"))
	if ok && strings.Contains(body, "<appr:status>"+c.decided+"</appr:status>") {
		l.mu.Lock()
		c.decAcked = true
		l.mu.Unlock()
		l.acks.decision.Add(1)
		return true, true
	} else if body != "" {
		l.refuse("decide", body)
	}
	return false, body != ""
}

// readPO is the workload's PO request (its poId is PO-000123).
func readPO() []byte {
	b, err := os.ReadFile(filepath.Join(workload, "po-request.xml"))
	if err != nil {
		panic(err)
	}
	return b
}

// storedInstance is what the invariants need of a stored instance.
type storedInstance struct {
	state, status string
}

// storeView holds the stored instances of the three processes by the
// client's id.
type storeView struct {
	pos, approvals, oneway map[string][]storedInstance
}

var (
	poStatusRE   = regexp.MustCompile(`<po:status>([^<]+)<`)
	apprIDRE     = regexp.MustCompile(`<appr:requestId>([^<]+)<`)
	apprStatusRE = regexp.MustCompile(`<appr:status>([^<]+)<`)
	tnsIDRE      = regexp.MustCompile(`<tns:id>([^<]+)<`)
)

// add files an instance of process (local name) in state under the id its
// variables' text (all of them, concatenated) carries.
func (v *storeView) add(process, state string, vars []byte) {
	first := func(re *regexp.Regexp) string {
		if m := re.FindSubmatch(vars); m != nil {
			return string(m[1])
		}
		return ""
	}
	switch process {
	case "PurchaseOrderPersistent":
		id := first(poIDRE)
		v.pos[id] = append(v.pos[id], storedInstance{state: state, status: first(poStatusRE)})
	case "OrderApproval":
		id := first(apprIDRE)
		v.approvals[id] = append(v.approvals[id], storedInstance{state: state, status: first(apprStatusRE)})
	case "Test":
		id := first(tnsIDRE)
		v.oneway[id] = append(v.oneway[id], storedInstance{state: state})
	}
}

func newStoreView() *storeView {
	return &storeView{pos: map[string][]storedInstance{}, approvals: map[string][]storedInstance{}, oneway: map[string][]storedInstance{}}
}

// readDataFile reads the instances from the data file orchd left (it must
// not run) without writing to it, and checks the file's consistency.
func readDataFile(data string) (*storeView, persist.VerifyReport, error) {
	st, err := persist.Open(filepath.Join(data, "orchd.db"), persist.Options{ReadOnly: true})
	if err != nil {
		return nil, persist.VerifyReport{}, err
	}
	defer st.Close()
	rep, err := st.Verify()
	if err != nil {
		return nil, rep, err
	}
	v, err := readInstances(st)
	return v, rep, err
}

// instanceReader is what readInstances needs of a store (bbolt or etcd).
type instanceReader interface {
	Instances(fn func(*persist.Instance) bool) error
	Instance(id string) (*persist.Instance, map[int][]byte, error)
}

// readInstances reads every stored instance with its variables.
func readInstances(st instanceReader) (*storeView, error) {
	var recs []*persist.Instance
	if err := st.Instances(func(in *persist.Instance) bool { recs = append(recs, in); return true }); err != nil {
		return nil, err
	}
	v := newStoreView()
	for _, rec := range recs {
		_, vars, err := st.Instance(rec.ID)
		if err != nil {
			return nil, err
		}
		var all []byte
		for _, b := range vars {
			all = append(all, b...)
		}
		v.add(rec.Process[strings.IndexByte(rec.Process, '}')+1:], rec.State.String(), all)
	}
	return v, nil
}

// listInstancesView reads the same from a running orchd's management
// API (listing and details).
func listInstancesView(base string) (*storeView, error) {
	v := newStoreView()
	for _, process := range []string{"PurchaseOrderPersistent", "OrderApproval", "Test"} {
		ins, err := apiInstances(context.Background(), base, mgmt.Query{Process: process})
		if err != nil {
			return nil, err
		}
		for _, in := range ins {
			var all []byte
			for _, x := range in.Variables {
				all = append(all, x...)
			}
			v.add(process, in.State, all)
		}
	}
	return v, nil
}

// checkInvariants compares the ledger, the partners' log and the store.
// final also requires what takes time: every short approval expired,
// every acknowledged one-way send delivered. With cleanup, an instance
// that completed may be gone. It returns the violations.
func checkInvariants(led *loadLedger, plog *partnerLog, v *storeView, final bool) []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	led.mu.Lock()
	defer led.mu.Unlock()
	for id, acked := range led.pos {
		ins := v.pos[id]
		crm, erp := plog.count(plog.crm, id), plog.count(plog.erp, id)
		switch {
		case len(ins) > 1:
			add("PO %s has %d instances", id, len(ins))
		case crm > 1 || erp > 1:
			add("PO %s reached the CRM %d times, the ERP %d times", id, crm, erp)
		case acked && (crm != 1 || erp != 1):
			add("acknowledged PO %s reached the CRM %d times, the ERP %d times", id, crm, erp)
		case acked && len(ins) == 0 && !led.cleanup:
			add("acknowledged PO %s has no instance", id)
		case acked && len(ins) == 1 && (ins[0].state != "completed" || ins[0].status != "ACCEPTED"):
			add("acknowledged PO %s: %+v", id, ins[0])
		}
	}
	for id := range v.pos {
		if _, ok := led.pos[id]; !ok {
			add("PO instance %q nobody sent", id)
		}
	}
	for id, c := range led.approvals {
		ins := v.approvals[id]
		mustWait := !c.short && c.decided == ""
		switch {
		case len(ins) > 1:
			add("approval %s has %d instances", id, len(ins))
		case len(ins) == 0:
			if c.acked && (!led.cleanup || mustWait) {
				add("acknowledged approval %s has no instance", id)
			}
		case c.decAcked && (ins[0].state != "completed" || ins[0].status != c.decided):
			add("approval %s decided %s (acknowledged) is %+v", id, c.decided, ins[0])
		case c.decided != "" && ins[0].state == "completed" && ins[0].status != c.decided:
			add("approval %s decided %s is %+v", id, c.decided, ins[0])
		case mustWait && ins[0].state != "waiting":
			add("undecided approval %s is %+v", id, ins[0])
		case c.short && ins[0].state == "completed" && ins[0].status != "EXPIRED":
			add("expiring approval %s is %+v", id, ins[0])
		case final && c.short && (ins[0].state != "completed" || ins[0].status != "EXPIRED"):
			add("approval %s did not expire: %+v", id, ins[0])
		case ins[0].state != "waiting" && ins[0].state != "completed":
			add("approval %s is %+v", id, ins[0])
		}
	}
	for id, acked := range led.oneway {
		ins := v.oneway[id]
		n := plog.count(plog.notified, id)
		switch {
		case len(ins) > 1:
			add("one-way %s has %d instances", id, len(ins))
		case n > 0 && len(ins) == 0 && !led.cleanup:
			add("one-way %s was delivered %d times, but its instance is not stored", id, n)
		case acked && len(ins) == 0 && !led.cleanup:
			add("acknowledged one-way %s has no instance", id)
		case acked && len(ins) == 1 && ins[0].state != "completed":
			add("acknowledged one-way %s is %+v", id, ins[0])
		case final && (acked || len(ins) == 1) && n == 0:
			add("one-way %s (acknowledged %v) was never delivered", id, acked)
		}
	}
	return bad
}

func TestCrashLoop(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	crashLoop(t, rounds, "-1s")
}

// TestCrashLoopMessageHold is the crash loop with correlated messages
// held (--message-hold, on by default): a decision that finds no waiting
// instance is held for one that comes to wait, not answered at once, and
// a kill drops what is held; nothing acknowledged may be lost.
func TestCrashLoopMessageHold(t *testing.T) {
	crashLoop(t, 6, "2s")
}

// crashLoop runs rounds of the crash loop with --message-hold hold.
func crashLoop(t *testing.T, rounds int, hold string) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	crm, erp, notify, plog := startRecordingPartners(t)
	deploy := crashDeploy(t, crm, erp, notify, false)
	data := t.TempDir()
	led := newLedger()
	args := []string{"--deploy", deploy, "--data", data, "--message-hold", hold}
	o := startOrchd(t, args...)
	defer func() {
		if t.Failed() {
			led.mu.Lock()
			t.Logf("refused %d; the first refusals:\n%s", led.refused.Load(), strings.Join(led.refusals, "\n"))
			led.mu.Unlock()
		}
	}()
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		run := time.Duration(200+rnd.IntN(1000)) * time.Millisecond
		before := [4]int64{led.acks.po.Load(), led.acks.request.Load(), led.acks.decision.Load(), led.acks.oneway.Load()}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			mixedLoad(o.base, fmt.Sprintf("R%d", r), led, stop, rnd.Uint64())
			close(done)
		}()
		time.Sleep(run)
		// Each round's orchd (a restarted one, but the first) must
		// acknowledge work before it is killed: wait for that event,
		// however slow the machine, rather than for a time.
		waitUntil(t, fmt.Sprintf("round %d: an exchange acknowledged by this orchd", r), func() bool {
			return led.acknowledged() > before[0]+before[1]+before[2]+before[3]
		})
		kill9(t, o)
		close(stop)
		<-done
		view, rep, err := readDataFile(data)
		if err != nil {
			t.Fatalf("round %d: data file: %v", r, err)
		}
		bad := checkInvariants(led, plog, view, false)
		o = startOrchd(t, args...)
		t.Logf("round %2d: killed after %v; acknowledged po=%d request=%d decision=%d oneway=%d; %s; %s",
			r, run, led.acks.po.Load()-before[0], led.acks.request.Load()-before[1], led.acks.decision.Load()-before[2], led.acks.oneway.Load()-before[3],
			rep, recoveredLine(o.log()))
		for _, b := range bad {
			t.Error(b)
		}
		if len(bad) > 0 {
			t.FailNow()
		}
	}
	rep, _ := finalCheck(t, o, data, led, plog, 20*time.Second)
	t.Logf("%d rounds in %v: acknowledged po=%d request=%d decision=%d oneway=%d, refused %d; final store %s",
		rounds, time.Since(start).Round(time.Millisecond), led.acks.po.Load(), led.acks.request.Load(), led.acks.decision.Load(), led.acks.oneway.Load(), led.refused.Load(), rep)
	led.requireProgress(t, int64(rounds), 20)
}

// finalCheck waits up to wait for every timer to fire and every outbox
// message to be delivered (the final invariants, on orchd's listing),
// stops orchd, and checks the invariants and the consistency of the data
// file it left. It reports each violation and returns their number.
func finalCheck(t *testing.T, o *orchd, data string, led *loadLedger, plog *partnerLog, wait time.Duration) (persist.VerifyReport, int) {
	t.Helper()
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		view, err := listInstancesView(o.base)
		if err != nil {
			t.Fatal(err)
		}
		if bad := checkInvariants(led, plog, view, true); len(bad) == 0 || time.Now().After(deadline) {
			break
		}
	}
	stopOrchd(t, o)
	view, rep, err := readDataFile(data)
	if err != nil {
		t.Fatalf("data file after the last stop: %v", err)
	}
	bad := checkInvariants(led, plog, view, true)
	for _, b := range bad {
		t.Error(b)
	}
	return rep, len(bad)
}

// stopOrchd stops orchd with SIGTERM and waits until it has exited.
func stopOrchd(t *testing.T, o *orchd) {
	t.Helper()
	if err := o.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-o.done; err != nil {
		t.Errorf("orchd did not stop cleanly: %v", err)
	}
	o.done <- nil
}

// recoveredLine is orchd's log line about what recovery found.
func recoveredLine(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "waiting=") {
			if i := strings.Index(line, "msg="); i >= 0 {
				return line[i:]
			}
			return line
		}
	}
	return "recovery: (no log line)"
}
