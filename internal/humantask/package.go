package humantask

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// A task package is WSO2 BPS's way of shipping human tasks: a folder (or
// zip) of .ht files, htconfig.xml and the task WSDLs, with no deploy.xml
// and no process, deployed beside the process bundle that invokes the
// tasks' services. Its tasks are published under the package's name as
// a bundle's are, and versioned the same way (Engine.Deploy).

// configFile is WSO2 BPS's task deployment configuration's file name.
const configFile = "htconfig.xml"

// HoldsDefinitions reports whether dir holds human task definitions: a
// .ht file or htconfig.xml at its top. A folder that does and has no
// deploy.xml is a task package.
func HoldsDefinitions(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, configFile)); err == nil {
		return true
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.ht"))
	return err == nil && len(files) > 0
}

// IsPackage is HoldsDefinitions, for the deployer's Tasks interface.
func (e *Engine) IsPackage(dir string) bool { return HoldsDefinitions(dir) }

// LoadPackage reads the task package in dir as DeployPackage would and
// returns what it publishes; an error names the file, element and line
// of each problem. A package with no .ht file is an error (its
// htconfig.xml would configure nothing).
func LoadPackage(dir string) (*Definitions, error) {
	defs, err := LoadDefinitions(dir)
	if err != nil {
		return nil, err
	}
	if defs == nil {
		return nil, errors.New("task package: " + configFile + " but no .ht file (a task package holds the tasks' .ht files, " + configFile + " and their WSDLs)")
	}
	return defs, nil
}

// DeployPackage deploys the task package in dir as version of package
// name (a new version of it when it was deployed before: tasks created
// on an older version keep their definition) and returns the QNames
// ({ns}local) of the tasks and notifications it defines. On an error
// nothing changes.
func (e *Engine) DeployPackage(name string, version int, dir string) ([]string, error) {
	defs, err := LoadPackage(dir)
	if err != nil {
		return nil, err
	}
	if err := e.add(name, version, defs); err != nil {
		return nil, err
	}
	return defs.names(), nil
}

// names are the QNames ({ns}local) of the definitions' tasks and
// notifications, sorted.
func (d *Definitions) names() []string {
	var out []string
	for _, m := range []map[xml.Name]*TaskDef{d.Tasks, d.Notifications} {
		for n := range m {
			out = append(out, fmt.Sprintf("{%s}%s", n.Space, n.Local))
		}
	}
	slices.Sort(out)
	return out
}
