package diagram

import (
	"fmt"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// heat are the fills of the version overlay's heat levels, from no time
// to the most.
var heat = [...]string{"#ffffff", "#fff4e0", "#ffe1b3", "#ffc97a", "#ffa94d", "#ff8a3d"}

// The colours of an instance's activity statuses: fill and stroke.
var statusColours = map[string][2]string{
	mgmt.ActivityCompleted:   {"#dafbe1", "#1a7f37"},
	mgmt.ActivityRunning:     {"#ddf4ff", "#0969da"},
	mgmt.ActivityWaiting:     {"#fff8c5", "#9a6700"},
	mgmt.ActivityFailed:      {"#ffebe9", "#cf222e"},
	mgmt.ActivityFaulted:     {"#ffebe9", "#cf222e"},
	mgmt.ActivityCompensated: {"#fbefff", "#8250df"},
	mgmt.ActivitySkipped:     {"#f6f8fa", "#afb8c1"},
	mgmt.ActivityUnknown:     {"#f6f8fa", "#8c959f"},
}

// Dur formats nanoseconds for a note: "840 µs", "12.3 ms", "2.1 s".
func Dur(ns uint64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// ForVersion is the overlay of a version's statistics, from its outline
// (mgmt.Process.Outline): each activity's completions, mean and p99 time
// in the instances timed, and faults; its outline is red when it
// faulted. A basic activity's fill is a heat level (data-state
// "heat-0" to "heat-5") by its share of the time of the basic activity
// that took longest; a structured one, whose time holds its children's,
// is not shaded (data-state "structured") and gives its times in its
// tooltip.
func ForVersion(p *mgmt.Process) Overlay {
	ov := Overlay{Marks: map[int]Mark{}}
	if p == nil || p.Outline == nil {
		return ov
	}
	ov.Caption = fmt.Sprintf("version %d · completions, mean and p99 time of the timed instances (the first %d, then one in %d); faults of all",
		p.Version, p.SampleFirst, max(p.SampleEvery, 1))
	var most uint64
	var walk func(a *mgmt.Activity, f func(*mgmt.Activity))
	walk = func(a *mgmt.Activity, f func(*mgmt.Activity)) {
		f(a)
		for _, k := range a.Children {
			walk(k, f)
		}
	}
	walk(p.Outline, func(a *mgmt.Activity) {
		if len(a.Children) == 0 {
			most = max(most, a.Nanos)
		}
	})
	walk(p.Outline, func(a *mgmt.Activity) {
		m := Mark{State: "heat-0", Fill: heat[0]}
		switch {
		case len(a.Children) > 0:
			m = Mark{State: "structured"}
		case most > 0 && a.Nanos > 0:
			lvl := 1 + int(float64(a.Nanos)/float64(most)*float64(len(heat)-2)+0.5)
			lvl = min(lvl, len(heat)-1)
			m.State, m.Fill = fmt.Sprintf("heat-%d", lvl), heat[lvl]
		}
		if a.Count > 0 {
			mean := a.Nanos / a.Count
			m.Note = fmt.Sprintf("×%d · %s", a.Count, Dur(mean))
			m.Title = append(m.Title, fmt.Sprintf("completed %d times in timed instances", a.Count), "mean "+Dur(mean))
			if a.P99Nanos > 0 {
				m.Note += " · p99 " + Dur(a.P99Nanos)
				m.Title = append(m.Title, "p99 ≤ "+Dur(a.P99Nanos))
			}
			if most > 0 && len(a.Children) == 0 {
				m.Title = append(m.Title, fmt.Sprintf("%.0f%% of the time of the basic activity that took longest", 100*float64(a.Nanos)/float64(most)))
			}
		} else {
			m.Title = append(m.Title, "not completed in a timed instance")
		}
		if a.Faults > 0 {
			m.Stroke = statusColours[mgmt.ActivityFaulted][1]
			m.Note = fmt.Sprintf("%d faults · %s", a.Faults, m.Note)
			m.Title = append(m.Title, fmt.Sprintf("faulted %d times", a.Faults))
		}
		ov.Marks[a.ID] = m
	})
	return ov
}

// ForInstance is the overlay of an instance: each activity's status as
// its fill and outline (data-state the status's name), what a waiting
// one waits for, and the activity the instance is suspended on in red
// with its reason, or a faulted one's fault.
func ForInstance(d *mgmt.InstanceDetail) Overlay {
	ov := Overlay{Marks: map[int]Mark{}}
	if d == nil {
		return ov
	}
	ov.Caption = fmt.Sprintf("instance %s · %s", d.ID, d.State)
	waits := map[string]string{} // by position
	for _, b := range d.Branches {
		if b.Position != "" {
			w := b.Waiting
			if w == "" {
				w = "running"
			}
			waits[b.Position] = w
		}
	}
	for _, a := range d.Activities {
		c := statusColours[a.Status]
		m := Mark{State: a.Status, Fill: c[0], Stroke: c[1], Title: []string{a.Status}}
		switch a.Status {
		case mgmt.ActivityWaiting, mgmt.ActivityRunning:
			if w, ok := waits[a.Position]; ok && w != "running" {
				m.Note = "waits: " + w
				m.Title = append(m.Title, "waits for "+w)
			}
		case mgmt.ActivityFailed:
			m.Strong = true
			if f := d.Failure; f != nil && (f.Position == "" || f.Position == a.Position) {
				m.Note = "failed: " + f.Reason
				m.Title = append(m.Title, f.Reason, fmt.Sprintf("%d attempts", f.Attempts))
			}
		case mgmt.ActivityFaulted:
			m.Strong = true
			if a.Fault != "" {
				m.Note = "fault " + a.Fault
				m.Title = append(m.Title, "fault "+a.Fault)
			}
		}
		if !a.Start.IsZero() {
			m.Title = append(m.Title, "since "+a.Start.UTC().Format(time.RFC3339))
		}
		ov.Marks[a.ID] = m
	}
	return ov
}
