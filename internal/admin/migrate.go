package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/orchd/orchd/internal/mgmt"
)

// migrateParams are migrate's own query parameters; the others are the
// instance filter's (and max).
var migrateParams = []string{"from", "to", "dryRun", "variable"}

// migrate is POST /api/v1/processes/{name}/migrate?from=V&to=W
// [&dryRun=true][&variable=OLD=NEW...][&<the list's filters>][&max=N]:
// a MigrateResult.
func (a *api) migrate(w http.ResponseWriter, r *http.Request) {
	m, ok := a.opts.Backend.(mgmt.Migrator)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this server does not migrate instances")
		return
	}
	req, err := ParseMigrate(r.PathValue("name"), r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := m.Migrate(r.Context(), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// ParseMigrate reads a migration of process name from query parameters
// (MigrateValues writes them). An unknown parameter or a malformed value
// is an error naming it.
func ParseMigrate(name string, v url.Values) (mgmt.MigrateRequest, error) {
	req := mgmt.MigrateRequest{Process: name}
	rest := url.Values{}
	for k, vs := range v {
		rest[k] = vs
	}
	var err error
	if req.From, err = intParam(v, "from", 0, 1, -1); err != nil {
		return req, err
	}
	if req.To, err = intParam(v, "to", 0, 1, -1); err != nil {
		return req, err
	}
	if req.From == 0 || req.To == 0 {
		return req, fmt.Errorf("from and to: give both versions (from=1&to=2)")
	}
	switch d := v.Get("dryRun"); d {
	case "", "false":
	case "true":
		req.DryRun = true
	default:
		return req, fmt.Errorf("dryRun %q: want true or false", d)
	}
	for _, s := range v["variable"] {
		old, to, ok := strings.Cut(s, "=")
		if !ok || old == "" {
			return req, fmt.Errorf("variable %q: want OLD=NEW (NEW empty: drop its value)", s)
		}
		if req.Variables == nil {
			req.Variables = map[string]string{}
		}
		req.Variables[old] = to
	}
	for _, k := range migrateParams {
		delete(rest, k)
	}
	if req.Query, err = ParseQuery(rest, true); err != nil {
		return req, err
	}
	if req.Query.Process != "" || req.Query.Version != 0 {
		return req, fmt.Errorf("process and version: the path names the process, from its version")
	}
	if req.Max, err = ParseMax(rest); err != nil {
		return req, err
	}
	return req, nil
}

// MigrateValues writes r as the query parameters ParseMigrate reads.
func MigrateValues(r mgmt.MigrateRequest) url.Values {
	v := Values(r.Query)
	v.Set("from", strconv.Itoa(r.From))
	v.Set("to", strconv.Itoa(r.To))
	if r.DryRun {
		v.Set("dryRun", "true")
	}
	for old, to := range r.Variables {
		v.Add("variable", old+"="+to)
	}
	if r.Max > 0 {
		v.Set("max", strconv.Itoa(r.Max))
	}
	return v
}
