package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers are the packages serve wires (moved out of cmd/orchd), and the
// orchd packages each must not import directly: the rule each doc.go
// states, as a table to check against the code.
var layers = []struct {
	pkg       string
	forbidden []string
}{
	{"hotdeploy", []string{"soap", "admin", "cluster", "clusternode", "clusterview", "mgmtbackend", "mgmtclient"}},
	{"mgmtbackend", []string{"admin", "soap", "adminserver"}},
	{"clusterview", []string{"process", "mgmtbackend", "soap"}},
	{"clusternode", []string{"soap", "admin", "mgmt", "mgmtbackend", "clusterview", "mgmtclient"}},
	{"mgmtclient", []string{"admin", "process", "mgmtbackend", "soap"}},
	{"ctl", []string{"process", "mgmtbackend", "soap", "hotdeploy"}},
	{"instancestore", []string{"soap", "admin", "mgmt", "cluster", "clusternode", "hotdeploy"}},
	{"adminserver", []string{"process", "soap", "mgmtbackend"}},
}

// TestLayers fails when one of the packages above imports one it must
// not (go list reads the imports).
func TestLayers(t *testing.T) {
	const prefix = "github.com/orchd/orchd/internal/"
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}
	for _, l := range layers {
		args = append(args, "../../internal/"+l.pkg)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[strings.TrimPrefix(f[0], prefix)] = f[1:]
	}
	for _, l := range layers {
		got, ok := imports[l.pkg]
		if !ok {
			t.Errorf("go list did not list %s", l.pkg)
		}
		for _, bad := range l.forbidden {
			if slices.Contains(got, prefix+bad) {
				t.Errorf("internal/%s imports internal/%s, which its doc.go forbids", l.pkg, bad)
			}
		}
	}
}
