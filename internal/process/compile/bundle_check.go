package compile

import (
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/check"
	"github.com/orchd/orchd/internal/process/wsdl"
)

// staticCheck runs WS-BPEL's static analysis (internal/process/check) over
// process d, adds its findings to errs, and returns where they are, so
// that the compiler's own errors at those lines can be dropped
// (dropChecked): where both refuse one construct, the finding says it
// with the rule.
func staticCheck(d *bpel.Document, w *wsdl.Set, errs *bpel.Errors) map[bpel.Pos]bool {
	at := map[bpel.Pos]bool{}
	for _, f := range check.Check(d, w) {
		errs.AddErr(f)
		at[f.Pos] = true
	}
	return at
}

// dropChecked removes the errors added to errs from index from on that
// are at a position static analysis already reported.
func dropChecked(errs *bpel.Errors, from int, at map[bpel.Pos]bool) {
	if len(at) == 0 {
		return
	}
	kept := errs.List[:from]
	for _, e := range errs.List[from:] {
		if ce, ok := e.(*bpel.CompileError); ok && at[ce.Pos] {
			continue
		}
		kept = append(kept, e)
	}
	errs.List = kept
}
