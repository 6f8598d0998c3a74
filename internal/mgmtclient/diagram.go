package mgmtclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/orchd/orchd/internal/mgmt"
)

// Diagram fetches the SVG diagram of a process version (GET
// /api/v1/processes/{name}/diagram), with the overlay of its statistics
// or, with q.Instance, of that instance's path.
func (c *Client) Diagram(ctx context.Context, q mgmt.DiagramQuery) ([]byte, error) {
	v := url.Values{}
	if q.Version != 0 {
		v.Set("version", strconv.Itoa(q.Version))
	}
	if q.Instance != "" {
		v.Set("instance", q.Instance)
	}
	return c.Do(ctx, http.MethodGet, "/processes/"+url.PathEscape(q.Process)+"/diagram", v, nil, nil)
}
