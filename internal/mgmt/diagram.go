package mgmt

import "context"

// Diagrammer is a Backend that draws process versions (internal/diagram):
// the management API's GET /api/v1/processes/{name}/diagram.
type Diagrammer interface {
	// Diagram draws a process version as an SVG document: with the
	// overlay of the version's per-activity statistics, or with
	// q.Instance, of that instance's activity statuses on its own
	// version.
	Diagram(ctx context.Context, q DiagramQuery) ([]byte, error)
}

// DiagramQuery says which diagram to draw.
type DiagramQuery struct {
	// Process is the process's local name or {ns}local.
	Process string
	// Version is the version's number; 0 the active one (else the
	// newest). With Instance it is the instance's and must be 0 or
	// that.
	Version int
	// Instance, when set, is the instance whose path is drawn; it must
	// be of Process.
	Instance string
}
