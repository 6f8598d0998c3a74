package mgmt

import "context"

// MaxPage is the most instances one listing page holds (Query.Limit's
// bound).
const MaxPage = 1000

// MaxBulkFailures is the most failures a BulkResult lists; Matched-Done
// counts them all.
const MaxBulkFailures = 1000

// InstanceIDs pages through the instances q selects (list is a Backend's
// Instances, or the engine's) from the first, and returns the ids of at
// most most of them, and whether more matched.
func InstanceIDs(ctx context.Context, list func(context.Context, Query) (*Page, error), q Query, most int) ([]string, bool, error) {
	var ids []string
	q.After = ""
	for len(ids) <= most {
		q.Limit = min(most+1-len(ids), MaxPage)
		p, err := list(ctx, q)
		if err != nil {
			return nil, false, err
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
		return ids[:most], true, nil
	}
	return ids, false, nil
}

// ActOnEach runs do on each of ids in turn, counting them in res
// (Matched, Done, Failed): no lock is held across the run, so an
// instance whose state changed meanwhile is one of the failures. It
// stops early, with what it did so far, when ctx ends.
func ActOnEach(ctx context.Context, res *BulkResult, ids []string, do func(context.Context, string) error) {
	res.Matched = len(ids)
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		if err := do(ctx, id); err != nil {
			if len(res.Failed) < MaxBulkFailures {
				res.Failed = append(res.Failed, BulkFailure{ID: id, Error: err.Error()})
			}
			continue
		}
		res.Done++
	}
}
