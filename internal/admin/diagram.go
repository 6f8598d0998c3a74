package admin

import (
	"net/http"

	"github.com/orchd/orchd/internal/mgmt"
)

// diagram is GET /api/v1/processes/{name}/diagram?version=N&instance=ID:
// the version's diagram as SVG (image/svg+xml), with its statistics or
// the instance's path. Like every read it needs the read token when one
// is configured; a Backend that draws nothing answers 503.
func (a *api) diagram(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, []string{"version", "instance"}); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	v, err := intParam(r.URL.Query(), "version", 0, 0, -1)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	d, ok := a.opts.Backend.(mgmt.Diagrammer)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "this server draws no diagrams")
		return
	}
	svg, err := d.Diagram(r.Context(), mgmt.DiagramQuery{Process: r.PathValue("name"), Version: v, Instance: r.URL.Query().Get("instance")})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	// Opened on its own, the document runs nothing and loads nothing.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(svg)
}
