package corrval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// Values reads the correlation values of a set from m with the given
// extractors, as one key string (the values joined by 0x1f).
func Values(m *exchange.Message, ex []*plan.PropExtract) (string, error) {
	var b strings.Builder
	for i, pe := range ex {
		if pe.Missing != "" {
			return "", errors.New(pe.Missing)
		}
		part := m.Part(pe.Part)
		if part == nil {
			return "", fmt.Errorf("message has no part %q for property %s", pe.Part, pe.Prop)
		}
		var v string
		if pe.Query == nil {
			v = expr.StringValue(part)
		} else {
			r := pe.Query.Eval(&expr.DocTree{Top: part}, part)
			var buf [1]expr.Node
			nodes, ok := expr.NodesIn(r, &buf)
			if ok && len(nodes) != 1 {
				return "", fmt.Errorf("property %s: alias query selects %d nodes, want one", pe.Prop, len(nodes))
			}
			v = expr.XpathString(r)
		}
		if i > 0 {
			b.WriteByte(0x1f)
		}
		b.WriteString(strings.TrimSpace(v))
	}
	return b.String(), nil
}

// Listed turns correlation values as instances and records keep them
// (the parts of a key joined by 0x1f) into their listed form (joined by
// commas); nil when there are none.
func Listed(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = ListedKey(v)
	}
	return out
}

// ListedKey is one stored value's listed form.
func ListedKey(v string) string { return strings.ReplaceAll(v, "\x1f", ",") }

// VarNames names the slots of p's variables: by declared name, a name
// declared more than once qualified by where ("name@file:line").
func VarNames(p *plan.Plan) map[int]string {
	count := map[string]int{}
	for _, v := range p.Vars {
		count[v.Name]++
	}
	out := make(map[int]string, len(p.Vars))
	for _, v := range p.Vars {
		name := v.Name
		if count[name] > 1 {
			name += "@" + v.Pos.String()
		}
		out[v.Slot] = name
	}
	return out
}
