package process

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
)

// SetVariable on a suspended persistent instance: what it refuses, by
// error kind, and what it stores (across a restart), with its event.
func TestSetVariable(t *testing.T) {
	m := newMgmtEnv(t)
	m.failing.Store(true)
	dispatch(t, m.e, m.rec, testReq("SV-1", "1", ""))
	pg, _ := m.e.QueryInstances(context.Background(), mgmt.Query{State: "suspended"})
	if len(pg.Instances) != 1 {
		t.Fatalf("%+v", pg)
	}
	id := pg.Instances[0].ID
	ctx := context.Background()
	tests := []struct {
		name, id, variable, value string
		err                       error // nil: set
		want                      string
	}{
		{"a simple variable", id, "status", "fixed by hand", nil, "fixed by hand"},
		{"a message part", id, "in", `<payload><tns:req xmlns:tns="urn:test"><tns:id>SV-1</tns:id><tns:n>2</tns:n><tns:text>x</tns:text></tns:req></payload>`, nil, "<tns:n>2</tns:n>"},
		{"a part the message lacks", id, "in", `<nopart/>`, mgmt.ErrInvalid, ""},
		{"not well-formed", id, "in", `<payload>`, mgmt.ErrInvalid, ""},
		{"no such variable", id, "nothing", "x", mgmt.ErrNotFound, ""},
		{"no such instance", "01NOSUCHINSTANCE000000000", "status", "x", mgmt.ErrNotFound, ""},
		{"an in-memory instance", "m1", "status", "x", mgmt.ErrConflict, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.e.SetVariable(ctx, tc.id, tc.variable, tc.value)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.detail(id).Variables[tc.variable]; !strings.Contains(got, tc.want) {
				t.Errorf("%s = %q, want it to hold %q", tc.variable, got, tc.want)
			}
		})
	}
	m.restart()
	d := m.detail(id)
	if d.State != mgmt.StateSuspended || d.Variables["status"] != "fixed by hand" || !strings.Contains(d.Variables["in"], "<tns:n>2</tns:n>") {
		t.Fatalf("after a restart: %s %v", d.State, d.Variables)
	}
	if !m.events.has(events.VariableChanged, id) {
		t.Error("no variableChanged event")
	}
	m.failing.Store(false)
	m.act(id, mgmt.Retry)
	if d := m.detail(id); d.State != mgmt.StateCompleted {
		t.Fatalf("after retry: %s", d.State)
	}
	if err := m.e.SetVariable(ctx, id, "status", "x"); !errors.Is(err, mgmt.ErrConflict) {
		t.Errorf("a completed instance: %v", err)
	}
}

// A failed in-memory exchange is kept with its fault, activity and
// variables, filtered by fault and activity, the newest failRingSize per
// version.
func TestFailedExchanges(t *testing.T) {
	e, procs := deployBundle(t, "mgmt-flow", func(*exchange.Endpoint) exchange.Partner {
		return exchange.PartnerFunc(func(ctx context.Context, c *exchange.Call) (*exchange.Message, error) {
			return nil, errors.New("partner down")
		})
	})
	for i := 0; i < failRingSize+5; i++ {
		dispatch(t, e, procs[0], testReq("F-"+string(rune('a'+i%26)), "1", ""))
	}
	all, err := e.FailedExchanges(mgmt.IncidentQuery{})
	if err != nil || len(all) != failRingSize {
		t.Fatalf("%d failures kept (%v), want %d", len(all), err, failRingSize)
	}
	inc := all[0]
	if inc.Kind != mgmt.IncidentFailed || !inc.InMemory || inc.ID == "" || !strings.HasSuffix(inc.Fault, "}activityFailure") ||
		!strings.HasPrefix(inc.Activity, "invoke ") || !strings.Contains(inc.Reason, "partner down") || len(inc.Variables) == 0 {
		t.Fatalf("the newest failure: %+v", inc)
	}
	if all[0].Time.Before(all[len(all)-1].Time) {
		t.Error("not newest first")
	}
	name := strings.TrimPrefix(inc.Activity, "invoke ")
	for _, tc := range []struct {
		q    mgmt.IncidentQuery
		want int
	}{
		{mgmt.IncidentQuery{Fault: "activityFailure"}, failRingSize},
		{mgmt.IncidentQuery{Fault: inc.Fault}, failRingSize},
		{mgmt.IncidentQuery{Fault: "other"}, 0},
		{mgmt.IncidentQuery{Activity: name}, -1},
		{mgmt.IncidentQuery{Activity: "nothing"}, 0},
		{mgmt.IncidentQuery{Query: mgmt.Query{Process: "nothing"}}, 0},
		{mgmt.IncidentQuery{Query: mgmt.Query{Process: procs[0].Name.Local}}, failRingSize},
		{mgmt.IncidentQuery{Query: mgmt.Query{Version: 99}}, 0},
	} {
		got, err := e.FailedExchanges(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want < 0 && len(got) == 0 || tc.want >= 0 && len(got) != tc.want {
			t.Errorf("%+v: %d, want %d", tc.q, len(got), tc.want)
		}
	}
}
