package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
)

// The instance filter's query parameters, in the order Values writes them.
var filterParams = []string{"process", "version", "state", "startedAfter", "startedBefore",
	"activeAfter", "activeBefore", "correlation", "correlationSet"}

// states are the states a filter may name.
var states = []string{mgmt.StateRunning, mgmt.StateWaiting, mgmt.StateSuspended, mgmt.StateCompleted,
	mgmt.StateFaulted, mgmt.StateTerminated, mgmt.StateBroken}

// ParseQuery reads an instance filter from query parameters: those of
// GET /api/v1/instances (bulk false: the filter, limit and after) or of
// a bulk action (bulk true: the filter only; max is read by ParseMax).
// An unknown parameter, a malformed value or one out of range is an
// error naming the parameter.
func ParseQuery(v url.Values, bulk bool) (mgmt.Query, error) {
	known := append([]string(nil), filterParams...)
	if bulk {
		known = append(known, "max")
	} else {
		known = append(known, "limit", "after", "scope")
	}
	if err := only(v, known); err != nil {
		return mgmt.Query{}, err
	}
	var q mgmt.Query
	var err error
	q.Process = v.Get("process")
	if q.Version, err = intParam(v, "version", 0, 0, -1); err != nil {
		return q, err
	}
	if q.State = v.Get("state"); q.State != "" && !slices.Contains(states, q.State) {
		return q, fmt.Errorf("state %q: want one of %s", q.State, strings.Join(states, ", "))
	}
	for _, t := range []struct {
		name string
		to   *time.Time
	}{{"startedAfter", &q.StartedAfter}, {"startedBefore", &q.StartedBefore},
		{"activeAfter", &q.ActiveAfter}, {"activeBefore", &q.ActiveBefore}} {
		if *t.to, err = timeParam(v, t.name); err != nil {
			return q, err
		}
	}
	q.Correlation = v.Get("correlation")
	q.CorrelationSet = v.Get("correlationSet")
	if q.CorrelationSet != "" && q.Correlation == "" {
		return q, fmt.Errorf("correlationSet %q: give the value to match in correlation too", q.CorrelationSet)
	}
	if !bulk {
		if q.Limit, err = intParam(v, "limit", DefaultLimit, 1, MaxLimit); err != nil {
			return q, err
		}
		q.After = v.Get("after")
		if q.Scope = v.Get("scope"); q.Scope != "" && q.Scope != mgmt.ScopeLocal {
			return q, fmt.Errorf("scope %q: want %s (this node's in-memory instances) or nothing (the whole cluster)", q.Scope, mgmt.ScopeLocal)
		}
	}
	return q, nil
}

// ParseMax reads a bulk action's max (default DefaultBulk, at most
// MaxBulk).
func ParseMax(v url.Values) (int, error) {
	return intParam(v, "max", DefaultBulk, 1, MaxBulk)
}

// Values writes q as the query parameters ParseQuery reads (the filter,
// and limit and after when set).
func Values(q mgmt.Query) url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("process", q.Process)
	if q.Version != 0 {
		v.Set("version", strconv.Itoa(q.Version))
	}
	set("state", q.State)
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"startedAfter", q.StartedAfter}, {"startedBefore", q.StartedBefore},
		{"activeAfter", q.ActiveAfter}, {"activeBefore", q.ActiveBefore}} {
		if !t.t.IsZero() {
			v.Set(t.name, t.t.Format(time.RFC3339Nano))
		}
	}
	set("correlation", q.Correlation)
	set("correlationSet", q.CorrelationSet)
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	set("after", q.After)
	set("scope", q.Scope)
	return v
}

// onlyParams refuses query parameters of r not in known.
func onlyParams(r *http.Request, known []string) error {
	return only(r.URL.Query(), known)
}

func only(v url.Values, known []string) error {
	var bad []string
	for k, vs := range v {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
			continue
		}
		if len(vs) > 1 {
			return fmt.Errorf("%s: given %d times, want it once", k, len(vs))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	if len(known) == 0 {
		return fmt.Errorf("unknown parameter %s (this takes none)", strings.Join(bad, ", "))
	}
	return fmt.Errorf("unknown parameter %s (known: %s)", strings.Join(bad, ", "), strings.Join(known, ", "))
}

// intParam reads an integer parameter: def when absent, an error when
// it is no integer or outside [lo, hi] (hi < 0: no upper bound).
func intParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want an integer", name, s)
	}
	if n < lo {
		return 0, fmt.Errorf("%s %d: want at least %d", name, n, lo)
	}
	if hi >= 0 && n > hi {
		return 0, fmt.Errorf("%s %d: at most %d", name, n, hi)
	}
	return n, nil
}

// timeParam reads an RFC 3339 time; zero when absent.
func timeParam(v url.Values, name string) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", name, s)
	}
	return t, nil
}
