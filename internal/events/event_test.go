package events

import (
	"encoding/json"
	"testing"
	"time"
)

// TestEventJSON pins an event's JSON, as the events file, a webhook and
// the live stream carry it: the names, their order and what is left out
// when empty are the wire format that readers of those depend on.
func TestEventJSON(t *testing.T) {
	at := time.Date(2026, 12, 5, 3, 4, 5, 6000000, time.UTC)
	for _, c := range []struct {
		ev   Event
		want string
	}{{
		ev: Event{Kind: PartnerAnswered, Time: at, Process: "{urn:po}PO", Version: 3, Instance: "i-1",
			Activity: "invoke", Name: "ship", Position: "po.bpel:42", Variable: "v", CorrelationSet: "cs",
			Value: "k=1", Partner: "shipping", Operation: "ship", Fault: "{urn:po}late", Detail: "slow",
			Duration: 1500 * time.Millisecond},
		want: `{"kind":"partnerAnswered","time":"2026-12-05T03:04:05.006Z","process":"{urn:po}PO","version":3,` +
			`"instance":"i-1","activity":"invoke","name":"ship","position":"po.bpel:42","variable":"v",` +
			`"correlationSet":"cs","value":"k=1","partner":"shipping","operation":"ship","fault":"{urn:po}late",` +
			`"detail":"slow","durationNs":1500000000}`,
	}, {
		ev:   Event{Kind: InstanceCreated, Time: at, Process: "{urn:po}PO", Instance: "i-1"},
		want: `{"kind":"instanceCreated","time":"2026-12-05T03:04:05.006Z","process":"{urn:po}PO","instance":"i-1"}`,
	}, {
		// An instance's timeline (mgmt.InstanceDetail) leaves out what
		// the detail names.
		ev:   Event{Kind: ActivityStarted, Time: at, Activity: "assign", Position: "po.bpel:7"},
		want: `{"kind":"activityStarted","time":"2026-12-05T03:04:05.006Z","activity":"assign","position":"po.bpel:7"}`,
	}} {
		b, err := json.Marshal(c.ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("JSON of %+v:\n got %s\nwant %s", c.ev, b, c.want)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("reading %s: %v", b, err)
		}
		if !back.Time.Equal(c.ev.Time) {
			t.Errorf("time read back as %v", back.Time)
		}
		back.Time = c.ev.Time
		if back != c.ev {
			t.Errorf("read back as %+v, want %+v", back, c.ev)
		}
	}
}
