package admin

import (
	"context"
	"net/http"

	"github.com/orchd/orchd/internal/mgmt"
)

// bulk is POST /api/v1/instances/bulk/{action}?<filter>&max=N.
func (a *api) bulk(w http.ResponseWriter, r *http.Request) {
	act, ok := action(w, r)
	if !ok {
		return
	}
	q, err := ParseQuery(r.URL.Query(), true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	most, err := ParseMax(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := Bulk(r.Context(), a.opts.Backend, q, act, most)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// Bulk applies act to the instances q selects, at most most of them. It
// first pages through the listing to collect them (most+1, to tell
// whether more matched), then acts on each in turn: no lock is held
// across the run, and an instance whose state changed meanwhile is
// reported among the failures. It stops early, with what it did so far,
// when ctx ends. At most 1000 failures are listed; Matched-Done counts
// them all.
func Bulk(ctx context.Context, b mgmt.Backend, q mgmt.Query, act mgmt.Action, most int) (*mgmt.BulkResult, error) {
	res := &mgmt.BulkResult{Action: act}
	var ids []string
	q.After = ""
	for len(ids) <= most {
		q.Limit = min(most+1-len(ids), MaxLimit)
		p, err := b.Instances(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, in := range p.Instances {
			ids = append(ids, in.ID)
		}
		if p.Next == "" || len(p.Instances) == 0 {
			break
		}
		q.After = p.Next
	}
	if len(ids) > most {
		ids, res.Truncated = ids[:most], true
	}
	res.Matched = len(ids)
	for _, id := range ids {
		if ctx.Err() != nil {
			return res, nil
		}
		if err := b.Act(ctx, id, act); err != nil {
			if len(res.Failed) < maxFailures {
				res.Failed = append(res.Failed, mgmt.BulkFailure{ID: id, Error: err.Error()})
			}
			continue
		}
		res.Done++
	}
	return res, nil
}
