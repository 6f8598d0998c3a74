package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchd/orchd/internal/instancestore"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
)

// instancesCommand defines orchd instances' flags; its run lists the
// stored instances of persistent processes with their variables, over
// the management API's listing and detail (process.StoreInstances): of
// the bbolt file in --data (locked while orchd serves it: then use orchd
// ctl instances, the API, instead), or, with --store etcd, of the etcd
// store a cluster of orchd nodes shares (read while they serve it).
func instancesCommand(fs *flag.FlagSet) runFunc {
	data := fs.String("data", "./data", "data directory holding "+instancestore.File)
	deploy := fs.String("deploy", "./deploy", "deploy directory, to name variables after the processes' declarations")
	proc := fs.String("process", "", "only this process (local name or {ns}local)")
	state := fs.String("state", "", "only this state: running, waiting, completed, faulted, terminated, suspended, broken (stored state that cannot be decoded)")
	asJSON := fs.Bool("json", false, "print JSON: a list of the instances' details, each as orchd ctl instance --json prints it")
	var sc instancestore.Config
	storeFlags(fs, &sc)
	return func(ctx context.Context, fs *flag.FlagSet, stdout, stderr io.Writer) int {
		if *state != "" && *state != mgmt.StateBroken {
			if _, err := persist.ParseState(*state); err != nil {
				fmt.Fprintln(stderr, "orchd instances:", err)
				return 2
			}
		}
		var st process.Store
		switch sc.Kind {
		case "", "bbolt":
			bst, err := persist.Open(filepath.Join(*data, instancestore.File), persist.Options{LockTimeout: 200e6})
			if err != nil {
				fmt.Fprintf(stderr, "orchd instances: %v\n(while orchd serves this data directory, list its instances with orchd ctl instances)\n", err)
				return 1
			}
			defer bst.Close()
			st = bst
		default:
			sc.Dir = *data
			est, err := instancestore.Open(sc, slog.New(slog.DiscardHandler))
			if err != nil {
				fmt.Fprintln(stderr, "orchd instances:", err)
				return 1
			}
			defer est.Close()
			st = est
		}
		plans, _, _ := compile.LoadDirWith(*deploy, compile.LoadOptions{Extensions: linkedExtensions()}) // only for variable names
		list, err := process.StoreInstances(ctx, st, interp.NewVersions(plans), mgmt.Query{Process: *proc, State: *state})
		if err != nil {
			fmt.Fprintln(stderr, "orchd instances:", err)
			return 1
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(list)
			return 0
		}
		for _, in := range list {
			if in.LastActive.IsZero() { // a broken record: nothing else is known
				fmt.Fprintf(stdout, "%s  %-10s\n", in.ID, in.State)
			} else {
				fmt.Fprintf(stdout, "%s  %-10s  %s  updated %s\n", in.ID, in.State, in.Process, in.LastActive.Format("2006-01-02T15:04:05Z07:00"))
			}
			if in.Fault != "" {
				fmt.Fprintf(stdout, "    fault: %s\n", in.Fault)
			}
			for k, v := range in.Correlations {
				fmt.Fprintf(stdout, "    correlation %s = %s\n", k, v)
			}
			for _, k := range slices.Sorted(maps.Keys(in.Variables)) {
				fmt.Fprintf(stdout, "    $%s = %s\n", k, strings.TrimSpace(in.Variables[k]))
			}
		}
		fmt.Fprintf(stdout, "%d instance(s)\n", len(list))
		return 0
	}
}
