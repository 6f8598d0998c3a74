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
// first pages through the listing to collect them (mgmt.InstanceIDs),
// then acts on each in turn (mgmt.ActOnEach).
func Bulk(ctx context.Context, b mgmt.Backend, q mgmt.Query, act mgmt.Action, most int) (*mgmt.BulkResult, error) {
	ids, truncated, err := mgmt.InstanceIDs(ctx, b.Instances, q, most)
	if err != nil {
		return nil, err
	}
	res := &mgmt.BulkResult{Action: act, Truncated: truncated}
	mgmt.ActOnEach(ctx, res, ids, func(ctx context.Context, id string) error { return b.Act(ctx, id, act) })
	return res, nil
}
