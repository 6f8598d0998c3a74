package compile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// insertMissing compiles the insertMissingToData path of the to-spec t
// compiled from te, or reports at te (or its <query>) why it cannot.
func (c *compiler) insertMissing(n *ast.To, t *plan.ToSpec) {
	te := &n.Element
	if te.Has("property") {
		c.errorf(te, "insertMissingToData cannot create the path of a variable property (the propertyAlias query): copy to the variable with a query instead")
		return
	}
	if t.Query == nil {
		return // the whole variable or part: a copy creates it anyway
	}
	at := te
	if q := n.Query; q != nil {
		at = &q.Element
	}
	p, err := compileInsertPath(t.Query.Src, c, t.Query.Ns)
	if err != nil {
		c.errorf(at, "insertMissingToData cannot create %q: %w", t.Query.Src, err)
		return
	}
	t.Insert = p
}

// insertMissingAttr reports whether the copy element ce carries
// insertMissingToData="yes", unprefixed or in ODE's extension namespace;
// an insertMissingToData attribute in any other namespace is an error.
func insertMissingAttr(ce *ast.Element) (bool, error) {
	for _, a := range ce.Attrs {
		if a.Key != "insertMissingToData" || a.Space == "xmlns" {
			continue
		}
		if ns := ce.AttrNamespace(a); a.Space != "" && ns != xmldoc.NSODEFunctions {
			return false, fmt.Errorf("attribute %s:insertMissingToData is in namespace %q; orchd knows it unprefixed or in ODE's %s", a.Space, ns, xmldoc.NSODEFunctions)
		}
		return a.Value == "yes", nil
	}
	return false, nil
}

// compileInsertPath parses src, a location path relative to a variable or
// part, into steps orchd can create; the error names the first construct
// it cannot.
func compileInsertPath(src string, r expr.Resolver, ns map[string]string) (*plan.InsertPath, error) {
	s := strings.TrimSpace(src)
	if strings.HasPrefix(s, "/") {
		if strings.HasPrefix(s, "//") {
			return nil, fmt.Errorf("// (descendant steps)")
		}
		return nil, fmt.Errorf("an absolute path (leading /): write the path relative to the variable")
	}
	raws, err := expr.SplitSteps(s)
	if err != nil {
		return nil, err
	}
	p := &plan.InsertPath{Steps: make([]plan.InsertStep, 0, len(raws))}
	for i, raw := range raws {
		st, err := insertStepOf(raw, r, ns)
		if err != nil {
			return nil, err
		}
		if (st.Attr || st.Text) && i < len(raws)-1 {
			return nil, fmt.Errorf("step %q: an attribute or text() step must be the last", raw)
		}
		p.Steps = append(p.Steps, st)
	}
	return p, nil
}

// insertStepOf compiles one step: [axis::]name[position], @name or text().
func insertStepOf(raw string, r expr.Resolver, ns map[string]string) (plan.InsertStep, error) {
	var st plan.InsertStep
	step := strings.TrimSpace(raw)
	name, pred := step, ""
	if i := strings.IndexByte(step, '['); i >= 0 {
		name, pred = strings.TrimSpace(step[:i]), strings.TrimSpace(step[i:])
	}
	if i := strings.Index(name, "::"); i >= 0 {
		switch axis := strings.TrimSpace(name[:i]); axis {
		case "child":
			name = strings.TrimSpace(name[i+2:])
		case "attribute":
			name = "@" + strings.TrimSpace(name[i+2:])
		default:
			return st, fmt.Errorf("step %q: the %s:: axis (only child and attribute steps)", raw, axis)
		}
	}
	switch {
	case name == "." || name == "..":
		return st, fmt.Errorf("step %q: . and .. (only child and attribute steps)", raw)
	case name == "text()":
		st.Text = true
	case strings.ContainsAny(name, "()"):
		return st, fmt.Errorf("step %q: a function call or node test (only names, @names and text())", raw)
	case strings.HasPrefix(name, "@"):
		st.Attr = true
		name = strings.TrimSpace(name[1:])
	}
	if pred != "" {
		if st.Attr || st.Text {
			return st, fmt.Errorf("step %q: a predicate on an attribute or text() step", raw)
		}
		if err := insertPosition(&st, raw, pred, r); err != nil {
			return st, err
		}
	}
	if st.Text {
		return st, nil
	}
	if name == "*" || strings.HasSuffix(name, ":*") {
		return st, fmt.Errorf("step %q: a wildcard (no name to create)", raw)
	}
	prefix, local := "", name
	if i := strings.IndexByte(name, ':'); i >= 0 {
		prefix, local = name[:i], name[i+1:]
	}
	if !expr.ValidNCName(local) || (prefix != "" && !expr.ValidNCName(prefix)) {
		return st, fmt.Errorf("step %q: %q is not a name", raw, name)
	}
	if prefix != "" {
		uri, ok := ns[prefix]
		if !ok {
			return st, fmt.Errorf("step %q: undeclared namespace prefix %q", raw, prefix)
		}
		st.Space, st.Prefix = uri, prefix
	}
	st.Local = local
	return st, nil
}

// insertPosition compiles pred, a step's predicates, into st's position:
// one predicate, a whole number from 1 or a numeric simple-typed $var.
func insertPosition(st *plan.InsertStep, raw, pred string, r expr.Resolver) error {
	bad := fmt.Errorf("step %q: predicate %s (only one position: [2] or [$i] with $i numeric)", raw, pred)
	if !strings.HasSuffix(pred, "]") || strings.Count(pred, "[") != 1 || strings.Count(pred, "]") != 1 {
		return bad
	}
	in := strings.TrimSpace(pred[1 : len(pred)-1])
	if strings.HasPrefix(in, "$") {
		v := r.LookupVar(in[1:])
		if v == nil || v.Simple != "number" {
			return bad
		}
		st.IndexVar = v
		return nil
	}
	n, err := strconv.Atoi(in)
	if err != nil || n < 1 {
		return bad
	}
	st.Index = n
	return nil
}
