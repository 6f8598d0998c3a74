package migrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// Instance is where an instance stands, as Check needs it.
type Instance struct {
	// Threads holds, for each live thread, the activity ids of its
	// frames, outermost first.
	Threads [][]int
	// Correlations are the names of the correlation sets it initiated.
	Correlations []string
	// Compensation says it holds compensation records of completed
	// scopes, which are not moved.
	Compensation bool
	// Busy says why it cannot move now (a request waits for its reply,
	// a partner call is in flight); empty when it can.
	Busy string
}

// Mapping is what the operator gives for what differs by name: a
// variable of the source renamed in the target (old name -> new name;
// an empty new name drops the variable's value).
type Mapping struct {
	Variables map[string]string
}

// Move is how one instance moves: Acts maps each activity id of its
// frames to the target's; Slots[i] is the target's slot (1-based) of
// the source's variable in slot i+1, 0 when its value is dropped.
// Target variables no slot maps to start with their initial values.
type Move struct {
	Acts  map[int]int
	Slots []int
}

// Pair is a source and a target version compared once, for the checks
// of all the source's instances.
type Pair struct {
	from, to     *plan.Plan
	toName       string // "version N" in reasons
	fromPaths    []string
	toByPath     map[string]int
	slots        []int
	varProblems  []string
	fromChildren [][]int
	toChildren   [][]int
}

// Compare prepares the checks of instances of from moving to to (toName
// names to in reasons, e.g. "version 2"), with the operator's mapping m.
func Compare(from, to *plan.Plan, toName string, m Mapping) *Pair {
	p := &Pair{from: from, to: to, toName: toName, toByPath: map[string]int{}}
	p.fromPaths, p.fromChildren = paths(from)
	var toPaths []string
	toPaths, p.toChildren = paths(to)
	for i, s := range toPaths {
		p.toByPath[s] = i
	}
	p.slots, p.varProblems = p.mapVars(m)
	return p
}

// mapVars maps the source's variables to the target's by name (or the
// mapping's), saying which cannot be.
func (p *Pair) mapVars(m Mapping) ([]int, []string) {
	byName := map[string][]*expr.Var{}
	for _, v := range p.to.Vars {
		byName[v.Name] = append(byName[v.Name], v)
	}
	seen := map[string]int{}
	slots := make([]int, len(p.from.Vars))
	var problems []string
	for i, v := range p.from.Vars {
		name := v.Name
		if to, ok := m.Variables[name]; ok {
			if to == "" {
				continue // dropped by the operator
			}
			name = to
		}
		// Variables of one name in several scopes pair up in order.
		k := seen[name]
		seen[name]++
		cands := byName[name]
		if k >= len(cands) {
			problems = append(problems, fmt.Sprintf("variable %s: not in %s (map it with --map-variable %s=NEW, or drop it with %s=)", v.Name, p.toName, v.Name, v.Name))
			continue
		}
		w := cands[k]
		if a, b := typeOf(v), typeOf(w); a != b {
			problems = append(problems, fmt.Sprintf("variable %s: its type differs in %s (%s, not %s)", v.Name, p.toName, b, a))
			continue
		}
		slots[i] = w.Slot
	}
	return slots, problems
}

// typeOf names a variable's type for comparison and reasons.
func typeOf(v *expr.Var) string {
	switch {
	case v.Msg != nil:
		return "message " + v.Msg.Name.String()
	case !v.Elem.IsZero():
		return "element " + v.Elem.String()
	}
	return "type " + v.Typ.String()
}

// Check says how in moves, or why it cannot (one reason per activity,
// variable or set that differs; nil Move then).
func (p *Pair) Check(in Instance) (*Move, []string) {
	problems := slices.Clone(p.varProblems)
	if in.Busy != "" {
		problems = append(problems, in.Busy)
	}
	if in.Compensation {
		problems = append(problems, "it holds compensation records of completed scopes, which migration does not move")
	}
	for _, name := range in.Correlations {
		a, b := p.from.CorrSets[name], p.to.CorrSets[name]
		switch {
		case b == nil:
			problems = append(problems, fmt.Sprintf("correlation set %s: not in %s", name, p.toName))
		case a == nil || !slices.Equal(a.Props, b.Props):
			problems = append(problems, fmt.Sprintf("correlation set %s: its properties differ in %s", name, p.toName))
		}
	}
	mv := &Move{Acts: map[int]int{}, Slots: p.slots}
	for _, th := range in.Threads {
		for _, id := range th {
			if _, done := mv.Acts[id]; done {
				continue
			}
			to, why := p.activity(id)
			if why != "" {
				if !slices.Contains(problems, why) {
					problems = append(problems, why)
				}
				continue
			}
			mv.Acts[id] = to
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return mv, nil
}

// activity is the target's activity at the path of the source's
// activity id, or why there is none that fits.
func (p *Pair) activity(id int) (int, string) {
	if id < 0 || id >= len(p.from.Acts) {
		return 0, fmt.Sprintf("activity %d: not in the source version", id)
	}
	a := p.from.Acts[id]
	what := fmt.Sprintf("activity %s at %s", describe(a), a.Where())
	to, ok := p.toByPath[p.fromPaths[id]]
	if !ok {
		return 0, what + ": not in " + p.toName + " (no activity at path " + p.fromPaths[id] + ")"
	}
	b := p.to.Acts[to]
	if ka, kb := kids(p.from, p.fromChildren[id]), kids(p.to, p.toChildren[to]); ka != kb {
		return 0, fmt.Sprintf("%s: its children differ in %s (%s, not %s)", what, p.toName, orNone(kb), orNone(ka))
	}
	if wa, wb := waits(a), waits(b); wa != wb {
		return 0, fmt.Sprintf("%s: it waits for other messages in %s (%s, not %s)", what, p.toName, orNone(wb), orNone(wa))
	}
	return to, ""
}

// paths gives every activity of pl its path: the kinds and names of its
// ancestors and its own, each with its rank among the siblings of that
// kind and name (so that an activity added before it elsewhere does not
// move it); and each activity's children in order.
func paths(pl *plan.Plan) ([]string, [][]int) {
	n := len(pl.Acts)
	children := make([][]int, n)
	var roots []int
	for i := range n {
		par := -1
		if i < len(pl.ActParent) {
			par = int(pl.ActParent[i])
		}
		if par >= 0 && par < n {
			children[par] = append(children[par], i)
		} else {
			roots = append(roots, i)
		}
	}
	out := make([]string, n)
	var walk func(ids []int, prefix string)
	walk = func(ids []int, prefix string) {
		rank := map[string]int{}
		for _, id := range ids {
			s := step(pl.Acts[id])
			out[id] = fmt.Sprintf("%s/%s[%d]", prefix, s, rank[s])
			rank[s]++
			walk(children[id], out[id])
		}
	}
	walk(roots, "")
	return out, children
}

// step is one activity's part of a path: its element and name
// (pick name="x"), or for a construct the compiler made, its kind in
// parentheses.
func step(a plan.Activity) string {
	d := describe(a)
	if !strings.HasPrefix(d, "<") {
		return "(" + strings.ToLower(d) + ")"
	}
	return strings.TrimSuffix(strings.TrimPrefix(d, "<"), ">")
}

// kids sums up an activity's children, kinds and names in order.
func kids(pl *plan.Plan, ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = step(pl.Acts[id])
	}
	return strings.Join(parts, ", ")
}

// waits sums up the messages a receive or pick waits for.
func waits(a plan.Activity) string {
	var ibs []*plan.Inbound
	switch x := a.(type) {
	case *plan.Receive:
		ibs = append(ibs, &x.Inbound)
	case *plan.Pick:
		for _, m := range x.Msgs {
			ibs = append(ibs, &m.Inbound)
		}
	}
	parts := make([]string, 0, len(ibs))
	for _, ib := range ibs {
		s := ""
		if ib.Pl != nil {
			s = ib.Pl.Name
		}
		if ib.Op != nil {
			s += "." + ib.Op.Name
		}
		for _, u := range ib.Corrs {
			s += " " + u.Set.Name
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// describe names an activity as the reasons show it: <pick name="x">.
func describe(a plan.Activity) string {
	if b, ok := a.(interface{ Describe() string }); ok {
		if d := b.Describe(); d != "<activity>" {
			return d
		}
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", a), "*plan.")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
