package ctl

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/mgmt"
)

// incidentUsage is the incident verbs' part of Usage.
const incidentUsage = `  incidents [FILTERS] [--fault NAME] [--activity A] [--limit N]
                                    what needs an operator: suspended instances (cause,
                                    activity, time) and failed in-memory exchanges
                                    (fault, activity, time, variables)
  set-variable ID NAME VALUE        change a variable of a suspended persistent instance
                                    (VALUE as its detail shows it; @FILE reads a file, - stdin)
  incident-bulk ACTION [FILTERS] [--fault NAME] [--activity A] [--max N]
                                    act on the suspended instances listed; ACTION an
                                    instance action, or set-variable NAME VALUE
`

// incidentFilter is the incident verbs' filter flags.
type incidentFilter struct {
	filterFlags
	fault, activity string
}

// register registers the instance filters but --state (incidents are
// suspended instances and failed exchanges), and --fault and --activity.
func (f *incidentFilter) register(fs *flag.FlagSet) {
	all := flag.NewFlagSet("", flag.ContinueOnError)
	f.filterFlags.register(all)
	all.VisitAll(func(fl *flag.Flag) {
		if fl.Name != "state" {
			fs.Var(fl.Value, fl.Name, fl.Usage)
		}
	})
	fs.StringVar(&f.fault, "fault", "", "only this fault (local name or {ns}local)")
	fs.StringVar(&f.activity, "activity", "", "only this activity (its name, \"kind name\", or file:line)")
}

func (f *incidentFilter) query(now time.Time) (mgmt.IncidentQuery, error) {
	q, err := f.filterFlags.query(now)
	return mgmt.IncidentQuery{Query: q, Fault: f.fault, Activity: f.activity}, err
}

func (r *ctlRun) incidents(args []string) error {
	var f incidentFilter
	limit := 0
	if _, err := r.flags("incidents", args, 0, func(fs *flag.FlagSet) {
		f.register(fs)
		fs.IntVar(&limit, "limit", 0, "at most this many (server default 50, at most 1000)")
	}); err != nil {
		return err
	}
	q, err := f.query(time.Now())
	if err != nil {
		return r.usagef("incidents: %v", err)
	}
	v := admin.IncidentValues(q)
	if limit != 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if err := r.connect(); err != nil {
		return err
	}
	var l mgmt.IncidentList
	return r.get("/incidents", v, &l, func() {
		showIncidents(r.stdout, &l)
		r.partial(l.Partial)
	})
}

// showIncidents prints the list: a table, then each failed exchange's
// variables.
func showIncidents(w io.Writer, l *mgmt.IncidentList) {
	tw := table(w, "ID\tKIND\tPROCESS\tVERSION\tTIME\tACTIVITY\tFAULT\tREASON")
	for _, in := range l.Incidents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", in.ID, in.Kind, local(in.Process), in.Version, when(in.Time),
			orNone(strings.TrimSpace(in.Activity+" "+in.Position)), orNone(local(in.Fault)), oneLineText(in.Reason, 100))
	}
	tw.Flush()
	for _, in := range l.Incidents {
		if len(in.Variables) == 0 && in.FaultData == "" {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s, %s):\n", in.ID, local(in.Process), in.Kind)
		if in.FaultData != "" {
			fmt.Fprintf(w, "  fault data:\n    %s\n", indent(in.FaultData))
		}
		names := make([]string, 0, len(in.Variables))
		for n := range in.Variables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %s:\n    %s\n", n, indent(in.Variables[n]))
		}
	}
	if l.Truncated {
		fmt.Fprintln(w, "more incidents match: narrow the filter, or raise --limit")
	}
}

func indent(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ") }

// value reads a VALUE operand: @FILE a file's content, - stdin.
func (r *ctlRun) value(s string) (string, error) {
	switch {
	case s == "-":
		b, err := io.ReadAll(os.Stdin)
		return string(b), err
	case strings.HasPrefix(s, "@"):
		b, err := os.ReadFile(s[1:])
		return string(b), err
	}
	return s, nil
}

// valueBody is the JSON body of a variable's change.
func valueBody(value string) io.Reader {
	b, _ := json.Marshal(mgmt.SetVariable{Value: value})
	return bytes.NewReader(b)
}

func (r *ctlRun) setVariable(args []string) error {
	ops, err := r.flags("set-variable", args, 3, nil)
	if err != nil {
		return err
	}
	value, err := r.value(ops[2])
	if err != nil {
		return r.usagef("set-variable: %v", err)
	}
	if err := r.connect(); err != nil {
		return err
	}
	var res admin.ActResult
	return r.mutate(http.MethodPost, "/instances/"+url.PathEscape(ops[0])+"/variables/"+url.PathEscape(ops[1]), nil, valueBody(value), &res, func() {
		fmt.Fprintf(r.stdout, "%s: %s set (%s)\n", res.ID, ops[1], res.State)
	})
}

func (r *ctlRun) incidentBulk(args []string) error {
	var f incidentFilter
	most := 0
	ops, err := r.flags("incident-bulk", args, -1, func(fs *flag.FlagSet) {
		f.register(fs)
		fs.IntVar(&most, "max", 0, "act on at most this many (server default 100)")
	})
	if err != nil {
		return err
	}
	act := ops[0]
	var body io.Reader
	q, err := f.query(time.Now())
	if err != nil {
		return r.usagef("incident-bulk: %v", err)
	}
	v := admin.IncidentValues(q)
	switch {
	case act == admin.SetVariableAction && len(ops) == 3:
		value, err := r.value(ops[2])
		if err != nil {
			return r.usagef("incident-bulk: %v", err)
		}
		v.Set("variable", ops[1])
		body = valueBody(value)
	case act == admin.SetVariableAction:
		return r.usagef("incident-bulk set-variable: want NAME VALUE")
	case !mgmt.Action(act).Valid() || len(ops) != 1:
		return r.usagef("incident-bulk: want an instance action, or set-variable NAME VALUE")
	}
	if most != 0 {
		v.Set("max", strconv.Itoa(most))
	}
	if err := r.connect(); err != nil {
		return err
	}
	var res mgmt.BulkResult
	return r.mutate(http.MethodPost, "/incidents/bulk/"+act, v, body, &res, func() {
		fmt.Fprintf(r.stdout, "%s: %d matched, %d done, %d failed\n", act, res.Matched, res.Done, res.Matched-res.Done)
		for _, f := range res.Failed {
			fmt.Fprintf(r.stdout, "  %s: %s\n", f.ID, f.Error)
		}
		if res.Truncated {
			fmt.Fprintln(r.stdout, "more incidents match: run it again, or raise --max")
		}
	})
}
