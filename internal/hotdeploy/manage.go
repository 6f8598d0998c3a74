package hotdeploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/orchd/orchd/internal/bundlezip"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/interp"
)

// The deployer's side of the management API: uploads, undeploys,
// version switches and the bundle listing.

// bundleNameRE is what a bundle name may be: a folder name of letters,
// digits, '-', '_' and '.', not starting with a dot.
var bundleNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// checkBundleName refuses a name that is not a plain folder name of the
// deploy directory (no path separator, no dot folder, no marker name).
func checkBundleName(name string) error {
	if len(name) > 200 || !bundleNameRE.MatchString(name) || strings.HasSuffix(name, markerSuffix) {
		return fmt.Errorf("bundle name %q: want letters, digits, '-', '_' and '.' (not first, not ending in %s): %w", name, markerSuffix, mgmt.ErrInvalid)
	}
	return nil
}

// DeployZip unpacks the zip archive data as bundle name of the deploy
// directory, replacing the folder there, and deploys it at once. An
// archive that is not a bundle changes nothing; a bundle that fails to
// deploy stays in the folder as a failed bundle (as one copied there
// would), and the version serving stays.
func (d *Deployer) DeployZip(name string, data []byte) (*mgmt.Bundle, error) {
	if err := checkBundleName(name); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(d.dir, uploadPrefix)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	if err := bundlezip.Extract(data, tmp, bundlezip.Limits{MaxBytes: d.opts.Bundle.WithDefaults().MaxBundle}); err != nil {
		if errors.Is(err, bundlezip.ErrArchive) {
			return nil, fmt.Errorf("bundle %s: %w: %w", name, mgmt.ErrInvalid, err)
		}
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := filepath.Join(d.dir, name)
	if _, err := os.Lstat(target); err == nil {
		old, err := os.MkdirTemp(d.dir, replacedPrefix)
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", name, err)
		}
		defer os.RemoveAll(old)
		if err := os.Rename(target, filepath.Join(old, name)); err != nil {
			return nil, fmt.Errorf("bundle %s: move the old folder aside: %w", name, err)
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	err = d.deploy(name)
	b := d.bundleLocked(name, d.active())
	if err != nil {
		return &b, fmt.Errorf("bundle %s: %w: %w", name, mgmt.ErrInvalid, err)
	}
	return &b, nil
}

// Temporary folders of deployZip in the deploy directory: the archive
// being unpacked, and the folder it replaces.
const (
	uploadPrefix   = ".upload-"
	replacedPrefix = ".old-"
)

// removeLeftovers deletes the temporary folders a deployZip interrupted
// by a crash left behind.
func (d *Deployer) removeLeftovers() {
	ents, _ := os.ReadDir(d.dir)
	for _, e := range ents {
		if n := e.Name(); e.IsDir() && (strings.HasPrefix(n, uploadPrefix) || strings.HasPrefix(n, replacedPrefix)) {
			if err := os.RemoveAll(filepath.Join(d.dir, n)); err != nil {
				d.log.Warn("leftover upload not removed", slog.String("folder", n), slog.Any("err", err))
			}
		}
	}
}

// Undeploy removes bundle name's folder and marker and undeploys it.
func (d *Deployer) Undeploy(name string) error {
	if err := checkBundleName(name); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := filepath.Join(d.dir, name)
	_, known := d.applied[name]
	if d.kind(name) == notABundle && !known {
		return fmt.Errorf("bundle %s: %w", name, mgmt.ErrNotFound)
	}
	if err := os.RemoveAll(target); err != nil {
		return fmt.Errorf("bundle %s: %w", name, err)
	}
	d.undeploy(name)
	return nil
}

// SetActive activates or retires a version (Engine.SetActive) and makes
// the front door serve what is active.
func (d *Deployer) SetActive(ctx context.Context, name string, version int, active bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	on, gone, err := d.engine.SetActive(ctx, name, version, active)
	if err != nil {
		return err
	}
	served := map[string]bool{}
	if on != nil {
		for _, ep := range on.Endpoints {
			served[ep.Path] = true
			if err := d.front.Replace(ep, d.engine); err != nil {
				return fmt.Errorf("process %s version %d: serve %s: %w", on.Name.Local, on.Number, ep.Path, err)
			}
		}
		d.log.Info("version activated", slog.String("process", on.Name.String()), slog.String("bundle", on.Bundle), slog.Int("version", on.Number))
	}
	d.unserve(gone, served)
	d.logRetired(gone)
	return nil
}

// active groups the engine's active processes by bundle.
func (d *Deployer) active() map[string][]*interp.Version {
	m := map[string][]*interp.Version{}
	for _, p := range d.engine.Processes() {
		m[p.Bundle] = append(m[p.Bundle], p)
	}
	return m
}

// Bundles lists the bundles of the deploy directory and those deployed
// from it, sorted by name.
func (d *Deployer) Bundles() ([]mgmt.Bundle, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := map[string]bool{}
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("deploy directory: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && d.kind(e.Name()) != notABundle {
			names[e.Name()] = true
		}
	}
	for n := range d.applied {
		names[n] = true
	}
	for n := range d.errors {
		names[n] = true
	}
	active := d.active()
	out := make([]mgmt.Bundle, 0, len(names))
	for n := range names {
		out = append(out, d.bundleLocked(n, active))
	}
	slices.SortFunc(out, func(a, b mgmt.Bundle) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// bundleLocked describes bundle name; active are the engine's active
// processes by bundle. The caller holds d.mu.
func (d *Deployer) bundleLocked(name string, active map[string][]*interp.Version) mgmt.Bundle {
	b := mgmt.Bundle{Name: name, State: "deployed"}
	for _, p := range active[name] {
		b.Processes = append(b.Processes, p.Name.String())
		if p.Number >= b.Version {
			b.Version, b.Deployed = p.Number, p.Deployed
		}
	}
	slices.Sort(b.Processes)
	if p, ok := d.packages[name]; ok && len(b.Processes) == 0 {
		b.Version, b.Deployed, b.Tasks = p.number, p.deployed, p.tasks
	}
	applied, tried := d.applied[name]
	switch {
	case d.errors[name] != nil:
		b.State = "failed"
		b.Errors = problemLines(d.errors[name])
	case !tried || d.seen[name] != applied:
		b.State = "pending"
	}
	return b
}

// problemLines splits a deploy error into its problems, one a line
// (file:line: element: what is wrong).
func problemLines(err error) []string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
