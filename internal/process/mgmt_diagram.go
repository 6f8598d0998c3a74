package process

import (
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
