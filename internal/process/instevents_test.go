package process

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// loadPOEvents is loadPO with a dispatcher feeding a JSON-lines file;
// done closes the dispatcher and returns the events written.
func loadPOEvents(t testing.TB, cats events.Category) (e *Engine, p *interp.Version, done func() []events.Event) {
	t.Helper()
	procs, err := loadBundle(exampleBundle)
	if err != nil {
		t.Fatal(err)
	}
	if cats != events.All {
		procs[0].Events = cats
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	f, err := events.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := events.NewDispatcher(events.Options{Budget: 10 * time.Second}, f)
	if err != nil {
		t.Fatal(err)
	}
	ip := &inProcessPartners{}
	e = NewEngine(Options{Partners: ip.bind, Events: d})
	if err := e.Deploy(procs...); err != nil {
		t.Fatal(err)
	}
	return e, procs[0], func() []events.Event {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		var evs []events.Event
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var ev events.Event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			evs = append(evs, ev)
		}
		return evs
	}
}

func TestInstanceEventsOfPurchaseOrder(t *testing.T) {
	e, p, done := loadPOEvents(t, events.All)
	if out, fault, err := submit(t, e, p, poMessage(t, "po-request.xml")); err != nil || fault != nil || out == nil {
		t.Fatalf("exchange failed: %v %v", fault, err)
	}
	evs := done()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	t.Logf("%d events for one purchase order", len(evs))
	if evs[0].Kind != events.InstanceCreated || evs[len(evs)-1].Kind != events.InstanceCompleted {
		t.Errorf("first %s, last %s; want instanceCreated ... instanceCompleted", evs[0].Kind, evs[len(evs)-1].Kind)
	}
	var kinds []string
	var invoked, answered, started, completed []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind.String())
		if ev.Instance == "" || ev.Instance != evs[0].Instance {
			t.Errorf("%s has instance %q, want %q", ev.Kind, ev.Instance, evs[0].Instance)
		}
		if ev.Process != "{urn:example:po:process}PurchaseOrder" {
			t.Errorf("%s has process %q", ev.Kind, ev.Process)
		}
		switch ev.Kind {
		case events.PartnerInvoked:
			invoked = append(invoked, ev.Partner+"."+ev.Operation)
		case events.PartnerAnswered:
			answered = append(answered, ev.Partner)
			if ev.Duration <= 0 || ev.Fault != "" {
				t.Errorf("answer %+v", ev)
			}
		case events.ActivityStarted:
			started = append(started, ev.Activity)
			if !strings.Contains(ev.Position, ".bpel:") {
				t.Errorf("activity event without a position: %+v", ev)
			}
		case events.ActivityCompleted:
			completed = append(completed, ev.Activity)
		}
	}
	if len(invoked) != 2 || len(answered) != 2 {
		t.Errorf("invoked %v, answered %v; want the CRM and ERP calls", invoked, answered)
	}
	for _, act := range []string{"assign", "invoke", "reply"} {
		if !slices.Contains(started, act) || !slices.Contains(completed, act) {
			t.Errorf("no %s started/completed: started %v completed %v", act, started, completed)
		}
	}
	if !slices.Contains(kinds, "variableChanged") {
		t.Errorf("no variableChanged in %v", kinds)
	}
}

func TestProcessEventsChooseCategories(t *testing.T) {
	e, p, done := loadPOEvents(t, events.InstanceLifecycle)
	if _, fault, err := submit(t, e, p, poMessage(t, "po-request.xml")); err != nil || fault != nil {
		t.Fatalf("exchange failed: %v %v", fault, err)
	}
	evs := done()
	if len(evs) != 2 || evs[0].Kind != events.InstanceCreated || evs[1].Kind != events.InstanceCompleted {
		t.Errorf("instanceLifecycle only: got %v", evs)
	}
	e, p, done = loadPOEvents(t, 0)
	if _, fault, err := submit(t, e, p, poMessage(t, "po-request.xml")); err != nil || fault != nil {
		t.Fatalf("exchange failed: %v %v", fault, err)
	}
	if evs := done(); len(evs) != 0 {
		t.Errorf("generate=none: got %d events", len(evs))
	}
}

func TestParseProcessEvents(t *testing.T) {
	for _, tc := range []struct {
		name, xml string
		want      events.Category
		err       string
	}{
		{"absent", ``, events.All, ""},
		{"all", `<process-events generate="all"/>`, events.All, ""},
		{"none", `<process-events generate="none"/>`, 0, ""},
		{"empty", `<process-events/>`, 0, ""},
		{"listed", "<process-events>\n<enable-event>instanceLifecycle</enable-event>\n<enable-event>correlation</enable-event>\n<scope-events name=\"s\"><enable-event>dataHandling</enable-event></scope-events>\n</process-events>",
			events.InstanceLifecycle | events.Correlation, ""},
		{"bad generate", `<process-events generate="some"/>`, 0, `deploy.xml:3: <process-events>: generate must be all or none, not "some"`},
		{"bad name", "<process-events>\n<enable-event>activity</enable-event></process-events>", 0, `deploy.xml:4: <enable-event>: unknown event category "activity"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:p="urn:p">
<process name="p:P">
` + tc.xml + `
</process></deploy>`
			doc, err := xmldoc.Parse("deploy.xml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var errs xmldoc.Errors
			d := deploy.Parse(doc, &errs)
			if tc.err != "" {
				if len(errs.List) != 1 || !strings.Contains(errs.List[0].Error(), tc.err) {
					t.Fatalf("errors %v, want %q", errs.List, tc.err)
				}
				return
			}
			if len(errs.List) > 0 {
				t.Fatal(errs.List)
			}
			if got := d.Processes[0].Events; got != tc.want {
				t.Errorf("events = %b, want %b", got, tc.want)
			}
		})
	}
}

// BenchmarkPurchaseOrderEventsFile is BenchmarkPurchaseOrder with every
// event written to a JSON-lines file.
func BenchmarkPurchaseOrderEventsFile(b *testing.B) {
	e, p, done := loadPOEvents(b, events.All)
	benchPO(b, e, p)
	b.StopTimer()
	done()
}
