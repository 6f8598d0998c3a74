package migrate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/plan"
)

// approval compiles the order approval with edits (old, new, ...) to
// its BPEL.
func approval(t *testing.T, edits ...string) *plan.Plan {
	t.Helper()
	src := "../../../deploy/order-approval"
	dir := filepath.Join(t.TempDir(), "order-approval")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if e.Name() == "OrderApproval.bpel" {
			for i := 0; i+1 < len(edits); i += 2 {
				if !strings.Contains(s, edits[i]) {
					t.Fatalf("no %q to edit", edits[i])
				}
				s = strings.ReplaceAll(s, edits[i], edits[i+1])
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pls, err := compile.LoadBundleWith(dir, compile.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pls[0]
}

// waitingAtPick is where an approval waiting for its decision stands:
// one thread, from the process down to the pick.
func waitingAtPick(t *testing.T, p *plan.Plan) Instance {
	t.Helper()
	i := slices.IndexFunc(p.Acts, func(a plan.Activity) bool { _, ok := a.(*plan.Pick); return ok })
	if i < 0 {
		t.Fatal("no pick")
	}
	var ids []int
	for id := i; id >= 0; id = int(p.ActParent[id]) {
		ids = append([]int{id}, ids...)
	}
	return Instance{Threads: [][]int{ids}, Correlations: []string{"byRequest"}}
}

func TestCheck(t *testing.T) {
	from := approval(t)
	renameTimeout := []string{`name="timeout"`, `name="limit"`, "$timeout", "$limit", `variable="timeout"`, `variable="limit"`}
	for _, tc := range []struct {
		name  string
		edits []string
		m     Mapping
		in    func(Instance) Instance
		want  []string // reasons (substrings); none: it moves
	}{
		{"same", nil, Mapping{}, nil, nil},
		{"other answers, a variable and an activity added elsewhere", []string{"'APPROVED'", "'OK'",
			`<variable name="request"`, `<variable name="note" type="xsd:string"/><variable name="request"`,
			"</assign>\n    </if>", "</assign>\n      <else><empty/></else>\n    </if>"}, Mapping{}, nil, nil},
		{"pick renamed", []string{`<pick name="awaitDecision">`, `<pick name="await">`}, Mapping{}, nil,
			[]string{`activity <pick name="awaitDecision"> at OrderApproval.bpel:`, `not in version W (no activity at path /(scope)[0]/sequence[0]/pick name="awaitDecision"[0])`}},
		{"an activity added to the waiting sequence", []string{`<pick name="awaitDecision">`, `<empty name="more"/><pick name="awaitDecision">`}, Mapping{}, nil,
			[]string{"activity <sequence> at OrderApproval.bpel:", "its children differ in version W", `empty name="more"`}},
		{"variable renamed", renameTimeout, Mapping{}, nil, []string{"variable timeout: not in version W (map it with --map-variable timeout=NEW"}},
		{"variable renamed, mapped", renameTimeout, Mapping{Variables: map[string]string{"timeout": "limit"}}, nil, nil},
		{"variable dropped", nil, Mapping{Variables: map[string]string{"timeout": ""}}, nil, nil},
		{"variable type", []string{`<variable name="timeout" type="xsd:string">`, `<variable name="timeout" type="xsd:token">`}, Mapping{}, nil,
			[]string{"variable timeout: its type differs in version W (type {http://www.w3.org/2001/XMLSchema}token, not type {http://www.w3.org/2001/XMLSchema}string)"}},
		{"correlation set", nil, Mapping{}, func(in Instance) Instance { in.Correlations = []string{"byOther"}; return in },
			[]string{"correlation set byOther: not in version W"}},
		{"busy", nil, Mapping{}, func(in Instance) Instance { in.Busy = "a request to it waits for its reply"; return in },
			[]string{"a request to it waits for its reply"}},
		{"compensation", nil, Mapping{}, func(in Instance) Instance { in.Compensation = true; return in },
			[]string{"compensation records"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to := approval(t, tc.edits...)
			in := waitingAtPick(t, from)
			if tc.in != nil {
				in = tc.in(in)
			}
			mv, why := Compare(from, to, "version W", tc.m).Check(in)
			if len(tc.want) == 0 {
				if why != nil || mv == nil {
					t.Fatalf("refused: %q", why)
				}
				// Each frame maps to the activity at the same place in the target.
				for _, id := range in.Threads[0] {
					a, b := from.Acts[id], to.Acts[mv.Acts[id]]
					if step(a) != step(b) {
						t.Errorf("activity %s maps to %s", step(a), step(b))
					}
				}
				for i, v := range from.Vars {
					if j := mv.Slots[i]; j > 0 && to.Vars[j-1].Name != v.Name && tc.m.Variables[v.Name] != to.Vars[j-1].Name {
						t.Errorf("variable %s maps to %s", v.Name, to.Vars[j-1].Name)
					}
				}
				return
			}
			all := strings.Join(why, "\n")
			if mv != nil {
				t.Fatalf("moved, want refused with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("reasons %q lack %q", all, w)
				}
			}
		})
	}
}
