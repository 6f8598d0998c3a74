package ctl

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/mgmt"
)

// variableFlags is the repeatable --map-variable OLD=NEW.
type variableFlags map[string]string

func (v variableFlags) String() string { return "" }

func (v variableFlags) Set(s string) error {
	old, to, ok := strings.Cut(s, "=")
	if !ok || old == "" {
		return fmt.Errorf("want OLD=NEW (NEW empty: drop its value)")
	}
	v[old] = to
	return nil
}

// migrate is orchd ctl migrate PROCESS --from V --to W [--dry-run]
// [--map-variable OLD=NEW]... [FILTERS] [--max N].
func (r *ctlRun) migrate(args []string) error {
	var f filterFlags
	req := mgmt.MigrateRequest{Variables: map[string]string{}}
	ops, err := r.flags("migrate", args, 1, func(fs *flag.FlagSet) {
		f.register(fs)
		fs.IntVar(&req.From, "from", 0, "the version the instances are on")
		fs.IntVar(&req.To, "to", 0, "the version they move to")
		fs.BoolVar(&req.DryRun, "dry-run", false, "list what would move and why the rest cannot; move nothing")
		fs.Var(variableFlags(req.Variables), "map-variable", "OLD=NEW: variable OLD of --from is NEW in --to (NEW empty: drop it); repeatable")
		fs.IntVar(&req.Max, "max", 0, "move at most this many (server default 100, at most 10000)")
	})
	if err != nil {
		return err
	}
	if req.From < 1 || req.To < 1 {
		return r.usagef("migrate: give --from and --to (version numbers)")
	}
	if f.process != "" || f.version != 0 {
		return r.usagef("migrate: the process is the argument and --from its version (not --process, --version)")
	}
	if req.Query, err = f.query(time.Now()); err != nil {
		return r.usagef("migrate: %v", err)
	}
	req.Process = ops[0]
	if err := r.connect(); err != nil {
		return err
	}
	var res mgmt.MigrateResult
	return r.post("/processes/"+url.PathEscape(req.Process)+"/migrate", admin.MigrateValues(req), &res, func() {
		showMigrate(r, &res)
	})
}

// showMigrate prints a migration's result: what moved, then each
// instance that cannot with its reasons.
func showMigrate(r *ctlRun, res *mgmt.MigrateResult) {
	w := r.stdout
	verb := "moved"
	if res.DryRun {
		verb = "would move (dry run)"
	}
	fmt.Fprintf(w, "%s version %d -> %d: %d waiting matched, %d %s, %d cannot move\n",
		res.Process, res.From, res.To, res.Matched, len(res.Moved), verb, len(res.Refused))
	for _, id := range res.Moved {
		fmt.Fprintf(w, "  %s %s\n", verb, id)
	}
	for _, x := range res.Refused {
		fmt.Fprintf(w, "  cannot move %s:\n", x.ID)
		for _, why := range x.Reasons {
			fmt.Fprintf(w, "    %s\n", why)
		}
	}
	if res.Truncated {
		fmt.Fprintln(w, "more instances match: run it again, or raise --max")
	}
}
