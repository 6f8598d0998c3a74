package process

import (
	"fmt"
	"slices"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/plan"
)

// Plan returns the compiled plan of one version of the process called
// name (local name or {ns}local; version 0: the active one, else the
// newest), for a diagram of it, and the version's number. An unknown
// process or version wraps mgmt.ErrNotFound.
func (e *Engine) Plan(name string, version int) (*plan.Plan, int, error) {
	e.mu.RLock()
	p, _ := e.findLocked(name, version)
	e.mu.RUnlock()
	if p == nil {
		return nil, 0, notFound(name, version)
	}
	return p.Plan, p.Number, nil
}

// PlanOf returns the compiled plan of the version of the process called
// name whose fingerprint is fp (active or retired), and its number here:
// an instance's version as every node names it. An unknown one wraps
// mgmt.ErrNotFound.
func (e *Engine) PlanOf(name, fp string) (*plan.Plan, int, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, q := range e.processes {
		if nameIs(q, name) && q.Fingerprint == fp {
			return q.Plan, q.Number, nil
		}
	}
	for _, q := range slices.Backward(e.retired) {
		if nameIs(q, name) && q.Fingerprint == fp {
			return q.Plan, q.Number, nil
		}
	}
	return nil, 0, fmt.Errorf("process %s: no version with fingerprint %s is deployed on this node: %w", name, fp, mgmt.ErrNotFound)
}
