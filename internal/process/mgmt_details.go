package process

import (
	"context"
	"errors"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/interp"
)

// Listing with details: orchd instances (StoreInstances) and the tests
// list every instance a query selects with its variables, over the
// management API's own listing (QueryInstances) and detail
// (InstanceDetail); there is no second listing.

// StoreInstances lists the instances of a store that no engine serves
// (orchd instances over a data file, or over the store a cluster shares
// while its nodes serve it), each with its detail, as details does.
// procs are the processes the stored instances belong to: their
// variables are named after procs' declarations, the slots of an
// instance of another process are numbered. It runs nothing and writes
// nothing to st.
func StoreInstances(ctx context.Context, st Store, procs []*interp.Version, q mgmt.Query) ([]*mgmt.InstanceDetail, error) {
	e := NewEngine(Options{Store: st})
	defer e.Close()
	// Not Deploy: nothing is bound or served, the processes only name
	// what the store holds.
	e.mu.Lock()
	e.processes = procs
	e.mu.Unlock()
	return e.details(ctx, q)
}

// details lists every instance q selects (QueryInstances, page after
// page: q.Limit and q.After are ignored), newest first, each with its
// detail (InstanceDetail). Reading the detail decodes the instance, so
// one whose control state or a variable cannot be decoded is found here
// and listed broken, and State "broken" selects it too (a listing alone
// shows only the broken instances the engine has met). An instance that
// is gone by the time its detail is read is left out.
func (e *Engine) details(ctx context.Context, q mgmt.Query) ([]*mgmt.InstanceDetail, error) {
	broken := q.State == mgmt.StateBroken
	if broken {
		q.State = ""
	}
	q.Limit, q.After = maxPageSize, ""
	out := []*mgmt.InstanceDetail{}
	for {
		page, err := e.QueryInstances(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, in := range page.Instances {
			d, err := e.InstanceDetail(ctx, in.ID)
			if errors.Is(err, mgmt.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if !broken || d.State == mgmt.StateBroken {
				out = append(out, d)
			}
		}
		if page.Next == "" {
			return out, nil
		}
		q.After = page.Next
	}
}
