package ctl

import (
	"flag"

	"github.com/orchd/orchd/internal/mgmt"
)

// diagram is orchd ctl diagram PROCESS [--version N] [--instance ID]:
// the version's SVG diagram on stdout (with its statistics, or the
// instance's path), as the server draws it.
func (r *ctlRun) diagram(args []string) error {
	var q mgmt.DiagramQuery
	ops, err := r.flags("diagram", args, 1, func(fs *flag.FlagSet) {
		fs.IntVar(&q.Version, "version", 0, "this version (default: the active one; with --instance, the instance's)")
		fs.StringVar(&q.Instance, "instance", "", "draw this instance's path: each activity's status, the failing one in red")
	})
	if err != nil {
		return err
	}
	if err := r.connect(); err != nil {
		return err
	}
	q.Process = ops[0]
	svg, err := r.c.Diagram(r.ctx, q)
	if err != nil {
		return err
	}
	_, err = r.stdout.Write(svg)
	return err
}
