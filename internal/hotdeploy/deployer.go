package hotdeploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
)

// Deployer watches --deploy with ODE's deploy-directory semantics (a
// poller, as ODE's DeploymentPoller):
//
//   - a bundle is a direct subfolder holding deploy.xml, or (with
//     Options.Tasks) a WSO2 BPS task package: .ht files or htconfig.xml
//     and no deploy.xml (taskpkg.go); it is deployed once its files (names, sizes, times) are the same at two polls in a
//     row, so a folder being copied is never deployed half-way;
//   - after a deploy (successful or not) the marker <deploy>/<bundle>.deployed
//     is written; deleting it, or changing the bundle's files, redeploys;
//   - a removed folder undeploys, and its marker is deleted.
//
// Each deploy is a new version of the bundle's processes. A process's
// versions are numbered per process (interp.Version.Number: its first deploy
// is 1, each redeploy the next); the archive of a version is named by the
// node's deploy counter (kept in --data/versions/next, or in memory
// without a store), which is never shown as a version. A
// bundle named name-N or name.N also retires the bundles name, name-M and
// name.M (ODE). A version with a persistent process is archived as
// --data/versions/<N>-<bundle>/ so that after a restart the instances
// that started on it find it; the archive is deleted once no instance
// uses the version. A bundle that fails to compile or deploy leaves the
// version serving in place and logs the problems (file:line: element).
//
// The management API deploys, undeploys and switches versions through
// the same deployer (manage.go): mu serializes those calls with the polls.
// Folders whose name starts with a dot (an upload being unpacked) are
// never bundles.
type Deployer struct {
	mu     sync.Mutex
	dir    string
	data   string // "" when there is no store: versions are not archived
	log    *slog.Logger
	engine *process.Engine
	front  Front
	opts   compile.LoadOptions
	// openStore is Options.OpenStore, nil once the store is open.
	openStore func() (string, error)
	grace     time.Duration // how long a retired version is kept at least
	next      int
	seen      map[string]string // bundle -> signature at the last poll
	applied   map[string]string // bundle -> signature last deployed (or tried)
	// Errors maps a bundle to the problems of its last failed deploy.
	errors map[string]error
	// links are the links in the deploy directory already reported as
	// not deployed (a bundle is a folder, never a link to one).
	links map[string]bool
	// deployNo is each version's deploy counter, which names its archive.
	deployNo map[*interp.Version]int
	// latest is the highest version number of each process (by QName).
	latest map[string]int
	// tasks is Options.Tasks (nil: none).
	tasks Tasks
	// packages are the task packages deployed (taskpkg.go), by name.
	packages map[string]taskPackage
}

// Tasks deploys the human task definitions of a bundle (its .ht files
// and htconfig.xml) with its processes, and WSO2 BPS's task packages
// (task definitions without a deploy.xml): internal/humantask's Engine.
type Tasks interface {
	// Deploy reads the definitions of the bundle in dir as its version
	// (a bundle without .ht files has none: no error); an error names
	// the file, element and line, and leaves what was deployed.
	Deploy(bundle string, version int, dir string) error
	// IsPackage reports whether dir holds task definitions (.ht files or
	// htconfig.xml): without a deploy.xml, it is a task package.
	IsPackage(dir string) bool
	// DeployPackage deploys the task package in dir as its version and
	// returns the QNames of the tasks and notifications it publishes; an
	// error names the file, element and line, and leaves what was
	// deployed.
	DeployPackage(name string, version int, dir string) ([]string, error)
	// Drop forgets one version (its processes were not deployed).
	Drop(bundle string, version int)
	// Undeploy forgets the bundle's (or task package's) definitions.
	Undeploy(bundle string)
}

// markerSuffix names the file written next to a deployed bundle folder.
const markerSuffix = ".deployed"

// versionsDir is the folder of --data holding the version counter and
// the archived versions.
const versionsDir = "versions"

// Front is the SOAP front door the deployer serves the deployed
// processes' endpoints on (*soap.Server implements it).
type Front interface {
	Replace(ep *exchange.Endpoint, d exchange.Dispatcher) error
	Remove(path string) bool
}

// Options configure a Deployer.
type Options struct {
	// Dir is the deploy directory (--deploy).
	Dir string
	// Data is the data directory whose versions folder keeps the
	// version counter and the archived versions; empty means there is
	// no store: versions are numbered in memory and not archived.
	Data string
	// Logger receives the deploys, undeploys and their problems; nil
	// discards them.
	Logger *slog.Logger
	// Engine runs the deployed processes.
	Engine *process.Engine
	// Front serves their endpoints.
	Front Front
	// Load compiles the bundles (the engine's extensions).
	Load compile.LoadOptions
	// OpenStore, when set and Data is empty (no store is open yet), is
	// called before a bundle with a persistent process is deployed: it
	// opens the instance store and returns its data directory, which
	// from then on is Data (versions are counted there and archived).
	// An error fails that deploy, and the version serving stays.
	OpenStore func() (data string, err error)
	// Tasks, when set, deploys each bundle's human task definitions
	// with its processes; a bundle whose definitions are broken is not
	// deployed.
	Tasks Tasks
}

// New returns the deployer of o.Dir. It deletes the leftovers of an
// upload a crash interrupted and reads the version counter.
func New(o Options) (*Deployer, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, data := o.Dir, o.Data
	d := &Deployer{dir: dir, data: data, log: log, engine: o.Engine, front: o.Front, opts: o.Load, next: 1,
		seen: map[string]string{}, applied: map[string]string{}, errors: map[string]error{}, links: map[string]bool{},
		deployNo: map[*interp.Version]int{}, latest: map[string]int{}, tasks: o.Tasks,
		packages: map[string]taskPackage{}}
	if data == "" {
		d.openStore = o.OpenStore
	}
	d.removeLeftovers()
	if err := d.readCounter(); err != nil {
		return nil, err
	}
	return d, nil
}

// readCounter takes the version counter of --data/versions/next when it
// is ahead of the one in memory.
func (d *Deployer) readCounter() error {
	if d.data == "" {
		return nil
	}
	path := filepath.Join(d.data, versionsDir, "next")
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("version counter: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 1 {
		return fmt.Errorf("version counter %s: not a positive number", path)
	}
	d.next = max(d.next, n)
	return nil
}

// storeFor opens the instance store (Options.OpenStore) when one of
// procs is persistent and none is open yet.
func (d *Deployer) storeFor(procs []*interp.Version) error {
	i := slices.IndexFunc(procs, func(p *interp.Version) bool { return !p.InMemory })
	if d.openStore == nil || i < 0 {
		return nil
	}
	data, err := d.openStore()
	if err != nil {
		return fmt.Errorf("persistent process %s: %w", procs[i].Name.Local, err)
	}
	d.data, d.openStore = data, nil
	return d.readCounter()
}

// archived is a version kept in --data/versions.
type archived struct {
	version int
	bundle  string
	path    string
}

var archiveRE = regexp.MustCompile(`^(\d+)-(.+)$`)

// archive lists the archived versions, oldest first.
func (d *Deployer) archive() ([]archived, error) {
	if d.data == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(filepath.Join(d.data, versionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("archived versions: %w", err)
	}
	var out []archived
	for _, e := range ents {
		m := archiveRE.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		out = append(out, archived{version: n, bundle: m[2], path: filepath.Join(d.data, versionsDir, e.Name())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// HasArchive reports whether dataDir holds archived versions (the store
// must then be opened even if no persistent process is deployed now).
func HasArchive(dataDir string) bool {
	ents, _ := os.ReadDir(filepath.Join(dataDir, versionsDir))
	return slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.IsDir() && archiveRE.MatchString(e.Name()) })
}

// Start numbers the processes loaded at start: a bundle whose archived
// newest version has the same definitions keeps its number, others get a
// new one. It then adds the other archived versions as retired, for the
// stored instances Recover loads, and marks every bundle deployed.
func (d *Deployer) Start(procs []*interp.Version, bad []*compile.BundleError) error {
	arch, err := d.archive()
	if err != nil {
		return err
	}
	byBundle := map[string][]*interp.Version{}
	for _, p := range procs {
		byBundle[p.Bundle] = append(byBundle[p.Bundle], p)
	}
	numbers := map[string]map[string]int{} // archive path -> process QName -> version
	for _, a := range arch {
		numbers[a.path] = readNumbers(a.path)
		for n, v := range numbers[a.path] {
			d.latest[n] = max(d.latest[n], v)
		}
	}
	current := map[string]bool{} // archive paths of the active versions
	for name, ps := range byBundle {
		var same *archived
		for i := range arch {
			if a := &arch[i]; a.bundle == name && d.sameDefinitions(a.path, ps) {
				same = a
			}
		}
		if same != nil {
			d.setDeployNo(ps, same.version)
			d.restoreNumbers(ps, numbers[same.path])
			current[same.path] = true
			continue
		}
		d.number(ps)
		if err := d.newVersion(name, ps); err != nil {
			return err
		}
		d.remember(ps)
	}
	var retired []*interp.Version
	for _, a := range arch {
		if current[a.path] {
			continue
		}
		ps, err := loadBundle(a.path, d.opts)
		if err != nil {
			d.log.Error("archived version not loaded", slog.String("bundle", a.bundle), slog.Int("version", a.version), slog.Any("err", err))
			continue
		}
		for _, p := range ps {
			p.Bundle = a.bundle
		}
		d.setDeployNo(ps, a.version)
		d.restoreNumbers(ps, numbers[a.path])
		retired = append(retired, ps...)
	}
	if err := d.engine.AddRetired(retired...); err != nil {
		d.log.Error("archived versions not loaded", slog.Any("err", err))
	}
	for name, ps := range byBundle {
		d.mark(name)
		if d.tasks != nil {
			if err := d.tasks.Deploy(name, d.deployNo[ps[0]], filepath.Join(d.dir, name)); err != nil {
				d.errors[name] = err
				d.log.Error("human task definitions not deployed", slog.String("bundle", name), slog.String("problems", err.Error()))
			}
		}
	}
	for _, b := range bad {
		name := filepath.Base(b.Dir)
		d.errors[name] = b.Err
		d.mark(name)
	}
	d.startPackages()
	return nil
}

// mark records bundle name as deployed as it is now and writes its marker.
func (d *Deployer) mark(name string) {
	sig := signature(filepath.Join(d.dir, name))
	d.seen[name], d.applied[name] = sig, sig
	if err := os.WriteFile(filepath.Join(d.dir, name+markerSuffix), nil, 0o644); err != nil {
		d.log.Warn("deploy marker not written", slog.String("bundle", name), slog.Any("err", err))
	}
}

// sameDefinitions reports whether the archived bundle at path compiles
// to processes with the fingerprints of ps.
func (d *Deployer) sameDefinitions(path string, ps []*interp.Version) bool {
	old, err := loadBundle(path, d.opts)
	if err != nil || len(old) != len(ps) {
		return false
	}
	fps := map[string]bool{}
	for _, p := range old {
		fps[p.Name.String()+"#"+p.Fingerprint] = true
	}
	for _, p := range ps {
		if !fps[p.Name.String()+"#"+p.Fingerprint] {
			return false
		}
	}
	return true
}

// setDeployNo records v as the deploy counter of ps.
func (d *Deployer) setDeployNo(ps []*interp.Version, v int) {
	for _, p := range ps {
		d.deployNo[p] = v
	}
}

// number gives each of ps the version after its process's latest.
func (d *Deployer) number(ps []*interp.Version) {
	for _, p := range ps {
		p.Number = d.latest[p.Name.String()] + 1
	}
}

// remember makes the versions of ps their processes' latest.
func (d *Deployer) remember(ps []*interp.Version) {
	for _, p := range ps {
		d.latest[p.Name.String()] = max(d.latest[p.Name.String()], p.Number)
	}
}

// restoreNumbers gives ps the version numbers an archive recorded, and
// the next ones to those it did not record (an archive from before the
// numbers were kept).
func (d *Deployer) restoreNumbers(ps []*interp.Version, nums map[string]int) {
	for _, p := range ps {
		if v, ok := nums[p.Name.String()]; ok {
			p.Number = v
		} else {
			d.number([]*interp.Version{p})
		}
		d.remember([]*interp.Version{p})
	}
}

// numbersFile, in an archived version's folder, records the version
// number of each of its processes: a line "N {ns}local" each.
const numbersFile = ".orchd-versions"

// readNumbers reads the version numbers an archive recorded (none when
// it has no numbers file).
func readNumbers(dir string) map[string]int {
	m := map[string]int{}
	b, err := os.ReadFile(filepath.Join(dir, numbersFile))
	if err != nil {
		return m
	}
	for _, l := range strings.Split(string(b), "\n") {
		n, name, ok := strings.Cut(strings.TrimSpace(l), " ")
		if v, err := strconv.Atoi(n); ok && err == nil && v > 0 {
			m[name] = v
		}
	}
	return m
}

// newVersion gives ps the next deploy counter and, when one of them is
// persistent, archives the bundle folder with their version numbers so
// the version outlives a restart.
func (d *Deployer) newVersion(name string, ps []*interp.Version) error {
	v, err := d.count()
	if err != nil {
		return err
	}
	d.setDeployNo(ps, v)
	if d.data == "" {
		return nil
	}
	vdir := filepath.Join(d.data, versionsDir)
	if !slices.ContainsFunc(ps, func(p *interp.Version) bool { return !p.InMemory }) {
		return nil
	}
	adir := filepath.Join(vdir, fmt.Sprintf("%d-%s", v, name))
	if err := copyDir(filepath.Join(d.dir, name), adir); err != nil {
		return fmt.Errorf("archive version %d of %s: %w", v, name, err)
	}
	var nums strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&nums, "%d %s\n", p.Number, p.Name)
	}
	if err := os.WriteFile(filepath.Join(adir, numbersFile), []byte(nums.String()), 0o644); err != nil {
		return fmt.Errorf("archive version %d of %s: %w", v, name, err)
	}
	return nil
}

// count takes the next deploy counter and, with a data directory, keeps
// the one after it in --data/versions/next.
func (d *Deployer) count() (int, error) {
	v := d.next
	d.next++
	if d.data == "" {
		return v, nil
	}
	vdir := filepath.Join(d.data, versionsDir)
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return 0, fmt.Errorf("versions: %w", err)
	}
	if err := os.WriteFile(filepath.Join(vdir, "next"), []byte(strconv.Itoa(d.next)+"\n"), 0o644); err != nil {
		return 0, fmt.Errorf("version counter: %w", err)
	}
	return v, nil
}

// Run polls every interval until ctx is done.
func (d *Deployer) Run(ctx context.Context, interval time.Duration) {
	d.grace = interval
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.Poll()
		}
	}
}

// Poll deploys, redeploys and undeploys what changed since the last poll.
func (d *Deployer) Poll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		d.log.Warn("deploy directory not read", slog.String("deploy", d.dir), slog.Any("err", err))
		return
	}
	present := map[string]bool{}
	links := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if e.Type()&fs.ModeSymlink != 0 && !strings.HasPrefix(name, ".") {
			links[name] = true
			if !d.links[name] {
				d.log.Warn("bundle not deployed: the deploy directory holds a symbolic link, not a bundle folder (a bundle holds regular files only)", slog.String("bundle", name))
			}
			continue
		}
		if !e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if d.kind(name) == notABundle {
			continue
		}
		present[name] = true
		sig := signature(filepath.Join(d.dir, name))
		if sig != d.seen[name] {
			d.seen[name] = sig // still changing: wait for it to be stable
			continue
		}
		_, merr := os.Stat(filepath.Join(d.dir, name+markerSuffix))
		if merr == nil && d.applied[name] == sig {
			continue
		}
		_ = d.deploy(name) // logged
	}
	d.links = links // warned once while the link stays
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), markerSuffix)
		if ok && !e.IsDir() && !present[name] {
			d.undeploy(name)
		}
	}
	for name := range d.applied {
		if !present[name] {
			d.undeploy(name)
		}
	}
	d.DropUnused()
}

// deploy compiles and deploys bundle name as a new version, retiring
// the version it replaces; on failure the serving version stays, and the
// problems are logged, kept for Bundles and returned.
func (d *Deployer) deploy(name string) error {
	if d.kind(name) == taskPackageKind {
		return d.deployPackage(name)
	}
	d.mark(name)
	procs, err := loadBundle(filepath.Join(d.dir, name), d.opts)
	if err == nil && len(procs) == 0 {
		err = errors.New("deploy.xml names no process")
	}
	if err == nil {
		err = d.storeFor(procs)
	}
	if err == nil {
		d.number(procs)
		err = d.newVersion(name, procs)
	}
	taskVersion := 0
	if err == nil && d.tasks != nil {
		taskVersion = d.deployNo[procs[0]]
		err = d.tasks.Deploy(name, taskVersion, filepath.Join(d.dir, name))
	}
	var gone []*interp.Version
	if err == nil {
		base := odeBase(name)
		gone, err = d.engine.Redeploy(func(b string) bool { return b == name || odeBase(b) == base }, procs...)
		if err != nil && d.tasks != nil {
			d.tasks.Drop(name, taskVersion)
		}
	}
	if err != nil {
		d.errors[name] = err
		if len(procs) > 0 && d.deployNo[procs[0]] > 0 {
			d.dropArchive(name, d.deployNo[procs[0]])
		}
		for _, p := range procs {
			delete(d.deployNo, p)
		}
		d.log.Error("bundle not deployed; the version serving stays", slog.String("bundle", name), slog.String("problems", err.Error()))
		return err
	}
	delete(d.errors, name)
	delete(d.packages, name) // a task package that became a process bundle
	d.remember(procs)
	served := map[string]bool{}
	for _, p := range procs {
		for _, ep := range p.Endpoints {
			served[ep.Path] = true
			if err := d.front.Replace(ep, d.engine); err != nil {
				d.log.Error("endpoint not served", slog.String("process", p.Name.Local), slog.Any("err", err))
				continue
			}
			d.log.Info("deployed", slog.String("process", p.Name.String()), slog.String("bundle", name), slog.Int("version", p.Number), slog.String("path", ep.Path))
		}
	}
	d.unserve(gone, served)
	d.logRetired(gone)
	return nil
}

func (d *Deployer) logRetired(gone []*interp.Version) {
	for _, p := range gone {
		d.log.Info("version retired", slog.String("process", p.Name.String()), slog.String("bundle", p.Bundle), slog.Int("version", p.Number))
	}
}

// unserve stops serving the endpoints of gone that no active process
// serves now (keep).
func (d *Deployer) unserve(gone []*interp.Version, keep map[string]bool) {
	for _, p := range d.engine.Processes() {
		for _, ep := range p.Endpoints {
			keep[ep.Path] = true
		}
	}
	for _, p := range gone {
		for _, ep := range p.Endpoints {
			if !keep[ep.Path] {
				d.front.Remove(ep.Path)
			}
		}
	}
}

// undeploy retires bundle name's processes and stops serving them.
func (d *Deployer) undeploy(name string) {
	gone := d.engine.Undeploy(name)
	if d.tasks != nil {
		d.tasks.Undeploy(name)
	}
	if p, ok := d.packages[name]; ok {
		delete(d.packages, name)
		d.log.Info("task package undeployed", slog.String("package", name), slog.Int("version", p.number), slog.Any("tasks", p.tasks))
	}
	d.unserve(gone, map[string]bool{})
	delete(d.seen, name)
	delete(d.applied, name)
	delete(d.errors, name)
	if err := os.Remove(filepath.Join(d.dir, name+markerSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.log.Warn("deploy marker not deleted", slog.String("bundle", name), slog.Any("err", err))
	}
	for _, p := range gone {
		d.log.Info("undeployed", slog.String("process", p.Name.String()), slog.String("bundle", name), slog.Int("version", p.Number))
	}
}

// DropUnused forgets the retired versions no instance uses, and their
// archives.
func (d *Deployer) DropUnused() {
	if len(d.engine.Retired()) == 0 {
		return
	}
	dropped, err := d.engine.DropUnused(d.grace)
	if err != nil {
		d.log.Warn("retired versions not checked", slog.Any("err", err))
		return
	}
	for _, p := range dropped {
		d.dropArchive(p.Bundle, d.deployNo[p])
		delete(d.deployNo, p)
		d.log.Info("version dropped", slog.String("process", p.Name.String()), slog.String("bundle", p.Bundle), slog.Int("version", p.Number))
	}
}

func (d *Deployer) dropArchive(name string, v int) {
	if d.data == "" {
		return
	}
	if err := os.RemoveAll(filepath.Join(d.data, versionsDir, fmt.Sprintf("%d-%s", v, name))); err != nil {
		d.log.Warn("archived version not deleted", slog.String("bundle", name), slog.Int("version", v), slog.Any("err", err))
	}
}

// odeBase strips a trailing -N or .N from a bundle name (ODE's
// versioned bundle naming): HelloWorld-2 is a version of HelloWorld.
func odeBase(name string) string {
	i := strings.LastIndexAny(name, "-.")
	if i <= 0 || i == len(name)-1 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil || strings.ContainsAny(name[i+1:], "+-") {
		return name
	}
	return name[:i]
}

// signature sums up a bundle folder's files (paths, sizes, times), to
// tell a folder that changes from one that is stable.
func signature(dir string) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "!%s\n", path)
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %d %d %v\n", rel, info.Size(), info.ModTime().UnixNano(), info.IsDir())
		return nil
	})
	return b.String()
}

// copyDir copies the regular files of the tree src to dst.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		return copyFile(path, target)
	})
}

// copyFile copies src to dst with src's permissions (a credentials file
// of mode 0600 stays 0600: orchd:usernameToken refuses any other).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// loadBundle compiles the bundle in dir and makes a new, undeployed
// version of each of its processes.
func loadBundle(dir string, opts compile.LoadOptions) ([]*interp.Version, error) {
	pls, err := compile.LoadBundleWith(dir, opts)
	if err != nil {
		return nil, err
	}
	return interp.NewVersions(pls), nil
}
