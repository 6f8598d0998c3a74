package compile

import (
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// staticCheck runs WS-BPEL's static analysis (internal/process/check) over
// process d and adds its findings to errs, but for the rules waived and
// those compatibility mode mode does not enforce, whose findings it
// returns as warnings. A finding that compatibility mode ODE would have
// let through says so (check.Hint). It also returns where the
// findings are, so that the compiler's own errors at those lines can be
// dropped (dropChecked): where both refuse one construct, the finding
// says it with the rule.
func staticCheck(d *ast.Process, w *wsdl.Set, errs *xmldoc.Errors, waived map[string]bool, mode check.Compat) (at map[xmldoc.Pos]bool, warnings []string) {
	at = map[xmldoc.Pos]bool{}
	for _, f := range check.CheckTree(d, w) {
		if waived[f.Rule] {
			// The compiler's own errors stand: a waived rule is one
			// the compiler can run without.
			warnings = append(warnings, "waived (orchd:waive): "+f.Error())
			continue
		}
		if what, ok := mode.Lenient(f); ok {
			warnings = append(warnings, "compat ode: "+f.Error()+" ("+what+")")
			continue
		}
		f.Msg += check.Hint(f)
		at[f.Pos] = true
		errs.AddErr(f)
	}
	return at, warnings
}

// compatOf is a process's compatibility mode: its deploy.xml's
// orchd:compat (validated by deploy.Parse) over the options'.
func compatOf(opts check.Compat, dd string) check.Compat {
	if dd == "" {
		return opts
	}
	m, err := check.ParseCompat(dd)
	if err != nil {
		return opts // deploy.Parse has refused the bundle
	}
	return m
}

// waiver is the set of rules waived for a process: the options' and its
// deploy.xml's.
func waiver(opts []string, dd map[string]bool) map[string]bool {
	if len(opts) == 0 {
		return dd
	}
	w := make(map[string]bool, len(opts)+len(dd))
	for _, r := range opts {
		w[r] = true
	}
	for r := range dd {
		w[r] = true
	}
	return w
}

// dropChecked removes the errors added to errs from index from on that
// are at a position static analysis already reported.
func dropChecked(errs *xmldoc.Errors, from int, at map[xmldoc.Pos]bool) {
	if len(at) == 0 {
		return
	}
	kept := errs.List[:from]
	for _, e := range errs.List[from:] {
		if ce, ok := e.(*xmldoc.CompileError); ok && at[ce.Pos] {
			continue
		}
		kept = append(kept, e)
	}
	errs.List = kept
}
