package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/orchd/orchd/internal/mgmt"
)

// SetVariableAction is the bulk "action" of POST
// /api/v1/incidents/bulk/set-variable?variable=NAME: set a variable of
// each suspended instance selected.
const SetVariableAction = "set-variable"

// maxValue bounds the body of a variable's change.
const maxValue = 1 << 20

// incidentRoutes adds the incident routes (mgmt.IncidentBackend).
func (a *api) incidentRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /api/v1/incidents", a.incidents)
	m.HandleFunc("POST /api/v1/incidents/bulk/{action}", a.incidentBulk)
	m.HandleFunc("POST /api/v1/instances/{id}/variables/{name}", a.setVariable)
}

// ParseIncidentQuery reads an incident filter: the instance filter's
// parameters (but state) and fault and activity; bulk as ParseQuery's
// (a bulk filter also takes max and variable, read by the caller).
func ParseIncidentQuery(v url.Values, bulk bool) (mgmt.IncidentQuery, error) {
	rest := url.Values{}
	for k, vs := range v {
		rest[k] = vs
	}
	var q mgmt.IncidentQuery
	for _, p := range []struct {
		name string
		to   *string
	}{{"fault", &q.Fault}, {"activity", &q.Activity}} {
		if len(rest[p.name]) > 1 {
			return q, fmt.Errorf("%s: given %d times, want it once", p.name, len(rest[p.name]))
		}
		*p.to = rest.Get(p.name)
		rest.Del(p.name)
	}
	if rest.Has("state") {
		return q, errors.New("state: incidents are suspended instances and failed exchanges; filter by fault or activity")
	}
	if bulk {
		rest.Del("variable")
	}
	var err error
	q.Query, err = ParseQuery(rest, bulk)
	return q, err
}

// IncidentValues writes q as the parameters ParseIncidentQuery reads.
func IncidentValues(q mgmt.IncidentQuery) url.Values {
	v := Values(q.Query)
	if q.Fault != "" {
		v.Set("fault", q.Fault)
	}
	if q.Activity != "" {
		v.Set("activity", q.Activity)
	}
	return v
}

// incidentBackend is the Backend's incident part, or an answer saying
// there is none.
func (a *api) incidentBackend(w http.ResponseWriter) (mgmt.IncidentBackend, bool) {
	ib, ok := a.opts.Backend.(mgmt.IncidentBackend)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "this server lists no incidents")
	}
	return ib, ok
}

// incidents is GET /api/v1/incidents.
func (a *api) incidents(w http.ResponseWriter, r *http.Request) {
	q, err := ParseIncidentQuery(r.URL.Query(), false)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ib, ok := a.incidentBackend(w)
	if !ok {
		return
	}
	l, err := ib.Incidents(r.Context(), q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// readValue reads a SetVariable body.
func readValue(w http.ResponseWriter, r *http.Request) (string, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxValue))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the value is larger than %d bytes", maxValue))
		return "", false
	}
	var sv mgmt.SetVariable
	if err := json.Unmarshal(b, &sv); err != nil {
		writeError(w, http.StatusBadRequest, `the body: want {"value": "..."}: `+err.Error())
		return "", false
	}
	return sv.Value, true
}

// setVariable is POST /api/v1/instances/{id}/variables/{name}.
func (a *api) setVariable(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, nil); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ib, ok := a.incidentBackend(w)
	if !ok {
		return
	}
	value, ok := readValue(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if err := ib.SetVariable(r.Context(), id, r.PathValue("name"), value); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ActResult{ID: id, State: mgmt.StateSuspended})
}

// incidentBulk is POST /api/v1/incidents/bulk/{action}: the action (or
// set-variable) on the suspended instances the incident filter selects.
func (a *api) incidentBulk(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("action")
	act := mgmt.Action(name)
	if name != SetVariableAction && !act.Valid() {
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown action %q (actions: the instance actions and %s)", name, SetVariableAction))
		return
	}
	q, err := ParseIncidentQuery(r.URL.Query(), true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	most, err := ParseMax(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ib, ok := a.incidentBackend(w)
	if !ok {
		return
	}
	do := func(ctx context.Context, id string) error { return a.opts.Backend.Act(ctx, id, act) }
	if name == SetVariableAction {
		variable := r.URL.Query().Get("variable")
		if variable == "" {
			writeError(w, http.StatusBadRequest, "variable: name the variable to set")
			return
		}
		value, ok := readValue(w, r)
		if !ok {
			return
		}
		do = func(ctx context.Context, id string) error { return ib.SetVariable(ctx, id, variable, value) }
	} else if r.URL.Query().Has("variable") {
		writeError(w, http.StatusBadRequest, "variable: only set-variable takes it")
		return
	}
	res, err := BulkIncidents(r.Context(), ib, q, most, do)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	res.Action = act
	writeJSON(w, http.StatusOK, res)
}

// BulkIncidents applies do to the suspended instances among the
// incidents q selects, at most most of them: it lists them first, then
// acts on each in turn, as Bulk does. Failed exchanges have ended:
// nothing applies to them, they are not counted.
func BulkIncidents(ctx context.Context, b mgmt.IncidentBackend, q mgmt.IncidentQuery, most int, do func(context.Context, string) error) (*mgmt.BulkResult, error) {
	q.Limit = MaxLimit
	l, err := b.Incidents(ctx, q)
	if err != nil {
		return nil, err
	}
	res := &mgmt.BulkResult{}
	var ids []string
	for _, inc := range l.Incidents {
		if inc.Kind == mgmt.IncidentSuspended {
			ids = append(ids, inc.ID)
		}
	}
	if len(ids) > most {
		ids, res.Truncated = ids[:most], true
	}
	res.Truncated = res.Truncated || l.Truncated
	mgmt.ActOnEach(ctx, res, ids, do)
	return res, nil
}
