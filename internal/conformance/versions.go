package conformance

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/mgmt"
)

// runVersioned runs the bundles at idx of bundles (TestVersionedRedeploy's
// HelloWorld-1, -2, -3) as ODE's VersionedRedeployTest did: deployed in
// order into one engine, each a new version of the same process that
// retires the one before (the bundles' names differ only by ODE's -N
// suffix), each bundle's cases run once it serves. After a bundle's
// cases, the newest version must be active, every older one retired, and
// every version must have started exactly one instance; a case that
// passed fails when that does not hold, naming what was found. It fills
// out and ok at idx.
func (r *Runner) runVersioned(ctx context.Context, bundles []*Bundle, idx []int, out [][]Result, ok []bool) {
	sort.Slice(idx, func(a, b int) bool { return bundles[idx[a]].Dir < bundles[idx[b]].Dir })
	var d *deployment
	defer func() {
		if d != nil {
			d.srv.Close()
		}
	}()
	for n, i := range idx {
		b := bundles[i]
		dir := filepath.Join(r.opts.Root, filepath.FromSlash(b.Dir))
		var derr error
		if d == nil {
			d, derr = r.deploy(dir)
		} else {
			derr = r.redeploy(d, dir, n+1)
		}
		out[i], ok[i] = r.runCases(ctx, b, d, derr), derr == nil
		if derr != nil || d == nil {
			continue
		}
		if why := versionsWrong(d.engine.Versions(), n+1); why != "" {
			for j := range out[i] {
				if res := &out[i][j]; res.Outcome == Pass {
					res.Outcome, res.Detail, res.Lenient = Fail, "after deploying "+b.Dir+": "+why, false
				}
			}
		}
	}
}

// redeploy deploys the bundle in dir into d's engine as version number,
// retiring the versions of the bundle it replaces (same name but for
// ODE's -N suffix), and serves its endpoints, as hot deploy does.
func (r *Runner) redeploy(d *deployment, dir string, number int) error {
	procs, err := r.load(dir, number)
	if err != nil {
		return err
	}
	base := odeBase(filepath.Base(dir))
	if _, err := d.engine.Redeploy(func(b string) bool { return odeBase(b) == base }, procs...); err != nil {
		return err
	}
	for _, p := range procs {
		for _, ep := range p.Endpoints {
			if err := d.front.Replace(ep, d.engine); err != nil {
				return fmt.Errorf("process %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

// odeBase is a bundle name without ODE's version suffix (-N).
func odeBase(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" && i < len(name)-1 {
		return name[:i]
	}
	return name
}

// versionsWrong says what is wrong with the versions listed, newest
// number newest: "" when version newest is active, the others are
// retired, there are newest of them, and each started one instance.
func versionsWrong(vs []mgmt.Process, newest int) string {
	if len(vs) != newest {
		return fmt.Sprintf("%d versions listed, want %d", len(vs), newest)
	}
	var bad []string
	for _, v := range vs {
		want := "retired"
		if v.Version == newest {
			want = "active"
		}
		if v.State != want {
			bad = append(bad, fmt.Sprintf("version %d is %s, want %s", v.Version, v.State, want))
		}
		if v.Stats.Started != 1 {
			bad = append(bad, fmt.Sprintf("version %d started %d instances, want 1", v.Version, v.Stats.Started))
		}
	}
	return strings.Join(bad, "; ")
}
