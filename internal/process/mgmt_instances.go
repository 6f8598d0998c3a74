package process

import (
	"context"
	"fmt"

	"github.com/orchd/orchd/internal/mgmt"
)

// QueryInstances lists instances for the management API (mgmt.Backend).
// Placeholder until instance control lands.
func (e *Engine) QueryInstances(ctx context.Context, q mgmt.Query) (*mgmt.Page, error) {
	return nil, fmt.Errorf("instance listing: %w", mgmt.ErrUnavailable)
}

// InstanceDetail describes one instance for the management API.
// Placeholder until instance control lands.
func (e *Engine) InstanceDetail(ctx context.Context, id string) (*mgmt.InstanceDetail, error) {
	return nil, fmt.Errorf("instance detail: %w", mgmt.ErrUnavailable)
}

// Act applies an operator's action to an instance. Placeholder until
// instance control lands.
func (e *Engine) Act(ctx context.Context, id string, a mgmt.Action) error {
	return fmt.Errorf("instance %s: %s: %w", id, a, mgmt.ErrUnavailable)
}
