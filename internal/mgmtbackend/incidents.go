package mgmtbackend

import (
	"context"
	"sort"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
)

var _ mgmt.IncidentBackend = (*Backend)(nil)

// Incident listing bounds.
const (
	defaultIncidents = 50
	maxIncidents     = 1000
	// maxSuspendedScan bounds the suspended instances one listing reads
	// (each one's detail is decoded for its failure).
	maxSuspendedScan = 5000
)

// Incidents implements mgmt.IncidentBackend: the suspended instances
// the listing selects (the cluster's, in a cluster), each with the
// failure it is suspended on, and this node's failed in-memory
// exchanges, newest first.
func (b *Backend) Incidents(ctx context.Context, q mgmt.IncidentQuery) (*mgmt.IncidentList, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = defaultIncidents
	}
	limit = min(limit, maxIncidents)
	out := &mgmt.IncidentList{Incidents: []mgmt.Incident{}}
	iq := q.Query
	iq.State, iq.After, iq.Limit = mgmt.StateSuspended, "", maxIncidents
	for scanned := 0; scanned < maxSuspendedScan; {
		p, err := b.Instances(ctx, iq)
		if err != nil {
			return nil, err
		}
		out.Partial = append(out.Partial, p.Partial...)
		for _, in := range p.Instances {
			scanned++
			inc := b.suspended(ctx, in)
			if q.Matches(&inc) {
				out.Incidents = append(out.Incidents, inc)
			}
		}
		if p.Next == "" || len(p.Instances) == 0 {
			break
		}
		iq.After = p.Next
	}
	failed, err := b.engine.FailedExchanges(q)
	if err != nil {
		return nil, err
	}
	out.Incidents = append(out.Incidents, failed...)
	if b.cv != nil {
		out.Partial = append(out.Partial, "failed in-memory exchanges: this node's only")
	}
	sort.SliceStable(out.Incidents, func(i, j int) bool { return out.Incidents[i].Time.After(out.Incidents[j].Time) })
	if len(out.Incidents) > limit {
		out.Incidents, out.Truncated = out.Incidents[:limit], true
	}
	return out, nil
}

// suspended is the incident of a suspended instance: its failure, when
// it is suspended on one, from its detail.
func (b *Backend) suspended(ctx context.Context, in mgmt.Instance) mgmt.Incident {
	inc := mgmt.Incident{Kind: mgmt.IncidentSuspended, ID: in.ID, Process: in.Process, Version: in.Version,
		InMemory: in.InMemory, Reason: in.Fault, Time: in.LastActive, Node: in.Node, Actions: []mgmt.Action{}}
	d, err := b.Instance(ctx, in.ID)
	if err != nil {
		inc.Reason += " (its detail: " + err.Error() + ")"
		return inc
	}
	inc.Actions = d.Actions
	if f := d.Failure; f != nil {
		inc.Fault, inc.Activity, inc.Position, inc.Reason, inc.Attempts = process.SuspendedFault(), f.Activity, f.Position, f.Reason, f.Attempts
		if !f.Time.IsZero() {
			inc.Time = f.Time
		}
	}
	return inc
}

// SetVariable implements mgmt.IncidentBackend. A persistent instance is
// changed in the store (shared in a cluster) under its lock, as the
// other actions on it are; in-memory instances are refused.
func (b *Backend) SetVariable(ctx context.Context, id, name, value string) error {
	return b.engine.SetVariable(ctx, id, name, value)
}
