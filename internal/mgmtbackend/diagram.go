package mgmtbackend

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/diagram"
	"github.com/orchd/orchd/internal/mgmt"
)

var _ mgmt.Diagrammer = (*Backend)(nil)

// Diagram implements mgmt.Diagrammer: the version's plan laid out by
// internal/diagram, with the overlay of the version's outline (its
// per-activity statistics) or of the instance's activity statuses.
//
// In a cluster the plan is this node's: a version no other node runs
// differently, as a fingerprint names it; an instance is read wherever
// it is (Instance), its version found here by its fingerprint (numbers
// may differ between nodes that deployed in another order).
func (b *Backend) Diagram(ctx context.Context, q mgmt.DiagramQuery) ([]byte, error) {
	var ov diagram.Overlay
	version := q.Version
	if q.Instance != "" {
		d, err := b.Instance(ctx, q.Instance)
		if err != nil {
			return nil, err
		}
		if !sameProcess(d.Process, q.Process) {
			return nil, fmt.Errorf("instance %s is of process %s, not %s: %w", q.Instance, d.Process, q.Process, mgmt.ErrInvalid)
		}
		if version != 0 && version != d.Version {
			return nil, fmt.Errorf("instance %s runs on version %d, not %d: %w", q.Instance, d.Version, version, mgmt.ErrInvalid)
		}
		if d.Version == 0 {
			return nil, fmt.Errorf("instance %s: its version is not deployed: %w", q.Instance, mgmt.ErrNotFound)
		}
		version = d.Version
		ov = diagram.ForInstance(d)
		if d.Fingerprint != "" {
			pl, _, err := b.engine.PlanOf(q.Process, d.Fingerprint)
			if err != nil {
				return nil, err
			}
			return svg(diagram.New(pl), ov, q.Process, version)
		}
	} else {
		p, err := b.engine.Version(q.Process, version)
		if err != nil {
			return nil, err
		}
		version = p.Version
		ov = diagram.ForVersion(p)
	}
	pl, _, err := b.engine.Plan(q.Process, version)
	if err != nil {
		return nil, err
	}
	return svg(diagram.New(pl), ov, q.Process, version)
}

// svg draws l with overlay ov.
func svg(l *diagram.Layout, ov diagram.Overlay, process string, version int) ([]byte, error) {
	var buf bytes.Buffer
	if err := l.SVG(&buf, ov); err != nil {
		return nil, fmt.Errorf("diagram of %s version %d: %w", process, version, err)
	}
	return buf.Bytes(), nil
}

// sameProcess reports whether full ({ns}local) is the process called
// name (its local name or {ns}local).
func sameProcess(full, name string) bool {
	if strings.HasPrefix(name, "{") {
		return full == name
	}
	_, local, ok := strings.Cut(full, "}")
	if !ok {
		local = full
	}
	return local == name
}
