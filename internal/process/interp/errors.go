package interp

import (
	"errors"
)

// errStepBudget is the failure of a run that took more activity steps than
// its budget without waiting (a loop like <while> true()): orchd's fault
// orchd:stepBudgetExceeded (namespace urn:orchd:fault). It is not a BPEL
// fault: no handler catches it, like a system failure.
var errStepBudget = errors.New("orchd:stepBudgetExceeded")
