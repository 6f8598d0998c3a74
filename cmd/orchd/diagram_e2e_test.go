package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/orchd/orchd/internal/mgmt"
)

// The diagram on the console's process and instance pages, checked in
// the browser by TestConsoleInBrowser: each activity's box is found by
// its plan id (data-activity) and its state (data-state) compared with
// what the API says.

// diagramStates returns, by activity id, the data-state of every
// activity box of the page's diagram.
func diagramStates(b *browser) map[string]string {
	b.t.Helper()
	return eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('#diagram svg g.act[data-activity]')].map(g => [g.dataset.activity, g.dataset.state || '']))`)
}

// checkVersionDiagram checks the process page's diagram of the active
// version of name: a box for every activity of the API's outline, by
// id and kind, a heat state on each basic activity ("structured" on the
// others); a reply the timed instances completed is shaded above zero
// and its tooltip says its count.
func checkVersionDiagram(b *browser, admin, name string) {
	t := b.t
	t.Helper()
	var p mgmt.Process
	apiGet(t, admin, "processes/"+url.PathEscape(name), &p)
	b.wait("the diagram drawn", `document.querySelectorAll('#diagram svg g.act[data-activity]').length > 0`)
	b.wait("a reply timed", `[...document.querySelectorAll('#diagram g.act[data-kind="reply"]')].some(g => /^heat-[1-9]/.test(g.dataset.state))`)
	states := diagramStates(b)
	var walk func(a *mgmt.Activity)
	n := 0
	walk = func(a *mgmt.Activity) {
		n++
		id := fmt.Sprint(a.ID)
		st, ok := states[id]
		if !ok {
			t.Errorf("no box for %s %s (activity %d) in the diagram", a.Kind, a.Name, a.ID)
		} else if want := "structured"; len(a.Children) == 0 && !strings.HasPrefix(st, "heat-") || len(a.Children) > 0 && st != want {
			t.Errorf("%s %s: state %q, want a heat level (a basic activity) or %q", a.Kind, a.Name, st, want)
		}
		if kind := eval[string](b, fmt.Sprintf(`document.querySelector('#diagram g[data-activity="%d"]')?.dataset.kind || ''`, a.ID)); ok && kind != a.Kind {
			t.Errorf("activity %d: the diagram says %q, the outline %q", a.ID, kind, a.Kind)
		}
		if a.Kind == "reply" && a.Count > 0 {
			title := eval[string](b, fmt.Sprintf(`document.querySelector('#diagram g[data-activity="%d"] > title').textContent`, a.ID))
			if !strings.Contains(title, fmt.Sprintf("completed %d times", a.Count)) {
				t.Errorf("reply %d's tooltip %q does not give its %d completions", a.ID, title, a.Count)
			}
		}
		for _, k := range a.Children {
			walk(k)
		}
	}
	if p.Outline == nil {
		t.Fatal("no outline")
	}
	walk(p.Outline)
	if len(states) != n {
		t.Errorf("%d activity boxes, the outline has %d activities", len(states), n)
	}
}

// checkInstanceDiagram checks the instance page's diagram of id: each
// activity box's state is the status the API gives it, and one box has
// state want (the waiting receive, the failed invoke), whose tooltip
// says wantTitle. It returns that box's activity id.
func checkInstanceDiagram(b *browser, admin, id, want, wantTitle string) int {
	t := b.t
	t.Helper()
	var d mgmt.InstanceDetail
	apiGet(t, admin, "instances/"+url.PathEscape(id), &d)
	b.wait("the instance's diagram", fmt.Sprintf(`document.querySelector('#diagram svg g.act[data-state=%q]') !== null`, want))
	states := diagramStates(b)
	found := -1
	for _, a := range d.Activities {
		st, ok := states[fmt.Sprint(a.ID)]
		if !ok {
			continue // an activity the block structure does not hold
		}
		if st != a.Status {
			t.Errorf("%s %s (activity %d): the diagram says %q, the API %q", a.Kind, a.Name, a.ID, st, a.Status)
		}
		if a.Status == want {
			found = a.ID
		}
	}
	if found < 0 {
		t.Fatalf("the API has no activity %s: %+v", want, d.Activities)
	}
	title := eval[string](b, fmt.Sprintf(`document.querySelector('#diagram g[data-activity="%d"] > title').textContent`, found))
	if !strings.Contains(title, wantTitle) {
		t.Errorf("activity %d's tooltip %q does not say %q", found, title, wantTitle)
	}
	if f := d.Failure; want == mgmt.ActivityFailed && (f == nil || !strings.Contains(title, f.Reason)) {
		t.Errorf("the failed activity's tooltip %q does not give the failure %+v", title, f)
	}
	return found
}

// shotDiagram saves the page scrolled to its diagram.
func shotDiagram(b *browser, name string) {
	b.t.Helper()
	_ = eval[bool](b, `(document.querySelector('#diagram-section').scrollIntoView(), true)`)
	b.shot(name)
	_ = eval[bool](b, `(window.scrollTo(0, 0), true)`)
}
