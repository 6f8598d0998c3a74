package hotdeploy

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WSO2 BPS ships human tasks as a package of their own, beside the
// process bundle that invokes them: a folder (or zip) of .ht files,
// htconfig.xml and the tasks' WSDLs, with no deploy.xml. The deployer
// deploys such a folder through Options.Tasks: its tasks are published
// under the package's name; each deploy is a new version of it (tasks
// created on an older one keep their definition), numbered 1, 2, ... in
// the listing and by the node's deploy counter in the task engine;
// removing the folder undeploys it. A package keeps nothing of its own
// in --data: after a restart it is deployed again from its folder.

// bundleKind is what a folder of the deploy directory holds.
type bundleKind int

const (
	notABundle bundleKind = iota
	// processBundle holds deploy.xml.
	processBundle
	// taskPackageKind holds task definitions and no deploy.xml.
	taskPackageKind
)

// kind is what the folder name of the deploy directory holds.
func (d *Deployer) kind(name string) bundleKind {
	dir := filepath.Join(d.dir, name)
	if _, err := os.Stat(filepath.Join(dir, "deploy.xml")); err == nil {
		return processBundle
	}
	if d.tasks != nil && d.tasks.IsPackage(dir) {
		return taskPackageKind
	}
	return notABundle
}

// taskPackage is a deployed task package.
type taskPackage struct {
	// number is the package's version: 1 at its first deploy, each
	// redeploy the next.
	number   int
	deployed time.Time
	// tasks are the QNames of the tasks and notifications it publishes.
	tasks []string
}

// deployPackage deploys the task package name as a new version; on
// failure the version serving stays, and the problems are logged, kept
// for Bundles and returned. A package that was a process bundle before
// (its deploy.xml is gone) has its processes undeployed.
func (d *Deployer) deployPackage(name string) error {
	d.mark(name)
	v, err := d.count()
	var tasks []string
	if err == nil {
		tasks, err = d.tasks.DeployPackage(name, v, filepath.Join(d.dir, name))
	}
	if err != nil {
		err = fmt.Errorf("task package: %w", err)
		d.errors[name] = err
		d.log.Error("task package not deployed; the version serving stays", slog.String("package", name), slog.String("problems", err.Error()))
		return err
	}
	delete(d.errors, name)
	gone := d.engine.Undeploy(name)
	d.unserve(gone, map[string]bool{})
	p := taskPackage{number: d.packages[name].number + 1, deployed: time.Now(), tasks: tasks}
	d.packages[name] = p
	d.log.Info("task package deployed", slog.String("package", name), slog.Int("version", p.number), slog.Any("tasks", tasks))
	return nil
}

// startPackages deploys the task packages of the deploy directory at
// start, before the first poll, so that a process recovered or started
// at once finds its tasks published.
func (d *Deployer) startPackages() {
	if d.tasks == nil {
		return
	}
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		d.log.Warn("deploy directory not read", slog.String("deploy", d.dir), slog.Any("err", err))
		return
	}
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && d.kind(e.Name()) == taskPackageKind {
			_ = d.deployPackage(e.Name()) // logged
		}
	}
}
