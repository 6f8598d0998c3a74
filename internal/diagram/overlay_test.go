package diagram

import (
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

func TestForVersion(t *testing.T) {
	ms := uint64(time.Millisecond)
	outline := &mgmt.Activity{ID: 0, Kind: "process", Count: 4, Nanos: 40 * ms, Children: []*mgmt.Activity{
		{ID: 1, Kind: "sequence", Count: 4, Nanos: 39 * ms, Children: []*mgmt.Activity{
			{ID: 2, Kind: "receive", Count: 4, Nanos: 4 * ms / 100, P99Nanos: ms / 50},
			{ID: 3, Kind: "invoke", Name: "slow", Count: 4, Nanos: 36 * ms, P99Nanos: 12 * ms, Faults: 2},
			{ID: 4, Kind: "reply"},
		}},
	}}
	ov := ForVersion(&mgmt.Process{Version: 3, SampleEvery: 64, SampleFirst: 16, Outline: outline})
	tests := []struct {
		id                int
		state, note       string
		title, stroke     string
		fillIsHeat, plain bool
	}{
		{0, "structured", "×4 · 10.0 ms", "completed 4 times", "", false, true},
		{1, "structured", "×4 · 9.8 ms", "mean 9.8 ms", "", false, true},
		{2, "heat-1", "×4 · 10 µs · p99 20 µs", "p99 ≤ 20 µs", "", true, false},
		{3, "heat-5", "2 faults · ×4 · 9.0 ms · p99 12.0 ms", "faulted 2 times", "#cf222e", true, false},
		{4, "heat-0", "", "not completed in a timed instance", "", true, false},
	}
	for _, tt := range tests {
		m, ok := ov.Marks[tt.id]
		if !ok {
			t.Errorf("activity %d: no mark", tt.id)
			continue
		}
		title := strings.Join(m.Title, "\n")
		if m.State != tt.state || m.Note != tt.note || !strings.Contains(title, tt.title) || m.Stroke != tt.stroke {
			t.Errorf("activity %d: state %q note %q stroke %q title %q; want %q, %q, %q, with %q", tt.id, m.State, m.Note, m.Stroke, title, tt.state, tt.note, tt.stroke, tt.title)
		}
		if tt.fillIsHeat && !strings.HasPrefix(m.Fill, "#") || tt.plain && m.Fill != "" {
			t.Errorf("activity %d: fill %q", tt.id, m.Fill)
		}
	}
	if !strings.Contains(ov.Caption, "version 3") || !strings.Contains(ov.Caption, "first 16, then one in 64") {
		t.Errorf("caption %q", ov.Caption)
	}
	if got := ForVersion(&mgmt.Process{}); len(got.Marks) != 0 {
		t.Errorf("a version without outline has marks: %+v", got)
	}
}

func TestForInstance(t *testing.T) {
	d := &mgmt.InstanceDetail{
		Instance: mgmt.Instance{ID: "i1", State: "suspended"},
		Branches: []mgmt.Branch{{Activity: "receive next", Position: "p.bpel:9", Waiting: "message go on client"}},
		Failure:  &mgmt.Failure{Activity: "invoke erp", Position: "p.bpel:12", Reason: "connection refused", Attempts: 3},
		Activities: []mgmt.ActivityStatus{
			{ID: 1, Kind: "receive", Position: "p.bpel:5", Status: mgmt.ActivityCompleted},
			{ID: 2, Kind: "receive", Name: "next", Position: "p.bpel:9", Status: mgmt.ActivityWaiting},
			{ID: 3, Kind: "invoke", Name: "erp", Position: "p.bpel:12", Status: mgmt.ActivityFailed},
			{ID: 4, Kind: "sequence", Position: "p.bpel:20", Status: mgmt.ActivityFaulted, Fault: "{urn:x}bad"},
			{ID: 5, Kind: "reply", Position: "p.bpel:30", Status: mgmt.ActivityNotReached},
		},
	}
	ov := ForInstance(d)
	tests := []struct {
		id           int
		state, note  string
		strong       bool
		stroke, want string // want: in the title
	}{
		{1, "completed", "", false, "#1a7f37", "completed"},
		{2, "waiting", "waits: message go on client", false, "#9a6700", "waits for message go on client"},
		{3, "failed", "failed: connection refused", true, "#cf222e", "3 attempts"},
		{4, "faulted", "fault {urn:x}bad", true, "#cf222e", "fault {urn:x}bad"},
		{5, "notReached", "", false, "", "notReached"},
	}
	for _, tt := range tests {
		m := ov.Marks[tt.id]
		if m.State != tt.state || m.Note != tt.note || m.Strong != tt.strong || m.Stroke != tt.stroke || !strings.Contains(strings.Join(m.Title, "\n"), tt.want) {
			t.Errorf("activity %d: %+v; want state %q note %q strong %v stroke %q title with %q", tt.id, m, tt.state, tt.note, tt.strong, tt.stroke, tt.want)
		}
	}
	if ov.Caption != "instance i1 · suspended" {
		t.Errorf("caption %q", ov.Caption)
	}
}

// TestEscaping: names and labels are text in the SVG, never markup.
func TestEscaping(t *testing.T) {
	l := &Layout{Title: `<x>&"'`, W: 100, H: 100, Boxes: []Box{{ID: 7, Role: RoleActivity, Kind: "invoke", Name: `a<b>"c"&d`, Leaf: true, Parent: -1, W: 50, H: 50, Detail: "</text><script>"}}, kids: [][]int{nil}, seqs: []bool{false}}
	var b strings.Builder
	if err := l.SVG(&b, Overlay{Caption: "<i>", Marks: map[int]Mark{7: {State: `"><x`, Note: "<n>", Title: []string{"<t>"}, Fill: `red"/><y`}}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<x>", "<b>", "<script>", "<i>", "<n>", "<t>", `"><x`, `"/><y`} {
		if strings.Contains(out, bad) {
			t.Errorf("%q unescaped in\n%s", bad, out)
		}
	}
	wellFormed(t, []byte(out))
}
