package hotdeploy

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/bundlefs"
	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process/compile"
)

// boundedRig is newRig (no store) whose bundles are read under lim.
func boundedRig(t *testing.T, lim bundlefs.Limits) *rig {
	t.Helper()
	return newRigWith(t, "", compile.LoadOptions{Bundle: lim})
}

// The bounds of --bundle-file-max and --bundle-max hold for a bundle
// uploaded as a zip and for one dropped into the deploy directory, and
// the errors name the file and the flag.
func TestBundleSizeBounds(t *testing.T) {
	stage := t.TempDir()
	echotest.Write(t, stage, "echo", "bounded", true)
	zipped := zipOf(t, filepath.Join(stage, "echo"))
	var largest, total int64
	for _, f := range []string{"echo.wsdl", "echo.bpel", "deploy.xml"} {
		fi, err := os.Stat(filepath.Join(stage, "echo", f))
		if err != nil {
			t.Fatal(err)
		}
		largest, total = max(largest, fi.Size()), total+fi.Size()
	}
	for _, tc := range []struct {
		name   string
		lim    bundlefs.Limits
		upload string // in the upload's error; "" deploys
		dir    string // in the deploy directory's error; "" deploys
	}{
		{"at the bounds", bundlefs.Limits{MaxFile: largest, MaxBundle: total}, "", ""},
		{"a file over", bundlefs.Limits{MaxFile: largest - 1}, "--bundle-file-max", "--bundle-file-max"},
		// The zip extraction stops first, with bundlezip's error.
		{"the bundle over", bundlefs.Limits{MaxBundle: total - 1}, "bytes", "--bundle-max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The zip upload: its extraction is bounded by the same
			// --bundle-max, then the folder is read as any bundle.
			r := boundedRig(t, tc.lim)
			_, err := r.d.DeployZip("echo", zipped)
			switch {
			case tc.upload == "":
				if err != nil {
					t.Fatalf("upload: %v", err)
				}
			case !errors.Is(err, mgmt.ErrInvalid) || !strings.Contains(err.Error(), tc.upload):
				t.Fatalf("upload: %v, want an error naming %s", err, tc.upload)
			}
			// The deploy directory.
			r = boundedRig(t, tc.lim)
			echotest.Write(t, r.dir, "echo", "bounded", true)
			r.d.Poll()
			r.d.Poll()
			bs, err := r.d.Bundles()
			if err != nil || len(bs) != 1 {
				t.Fatalf("Bundles: %v %+v", err, bs)
			}
			want := tc.dir
			if want == "" {
				if bs[0].State != "deployed" {
					t.Fatalf("bundle %+v, want deployed", bs[0])
				}
				return
			}
			if bs[0].State != "failed" || !strings.Contains(strings.Join(bs[0].Errors, "\n"), want) {
				t.Fatalf("bundle %+v, want failed naming %s", bs[0], want)
			}
		})
	}
}

// A bundle holding a link is refused by name; the bundle beside it
// deploys.
func TestBundleWithLinkRefusedOthersDeploy(t *testing.T) {
	r := boundedRig(t, bundlefs.Limits{})
	echotest.Write(t, r.dir, "linked", "linked", true)
	if err := os.Symlink("/dev/zero", filepath.Join(r.dir, "linked", "extra.xsd")); err != nil {
		t.Fatal(err)
	}
	echotest.Write(t, r.dir, "echo", "fine", true)
	r.d.Poll()
	r.d.Poll()
	bs, err := r.d.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, b := range bs {
		state[b.Name] = b.State + " " + strings.Join(b.Errors, "; ")
	}
	if !strings.HasPrefix(state["linked"], "failed") || !strings.Contains(state["linked"], "extra.xsd: a symbolic link") {
		t.Errorf("linked: %q, want failed naming extra.xsd as a symbolic link", state["linked"])
	}
	if strings.TrimSpace(state["echo"]) != "deployed" {
		t.Errorf("echo: %q, want deployed", state["echo"])
	}
	if got := echotest.Call(t, r.url, "x"); got != "fine-x" {
		t.Errorf("echo answers %q", got)
	}
}

// A link in the deploy directory to a bundle folder outside is not
// deployed, and is reported once by name while it stays.
func TestLinkedBundleFolderNotDeployed(t *testing.T) {
	var logs strings.Builder
	r := boundedRig(t, bundlefs.Limits{})
	r.d.log = slog.New(slog.NewTextHandler(&logs, nil))
	outside := t.TempDir()
	echotest.Write(t, outside, "echo", "outside", true)
	if err := os.Symlink(filepath.Join(outside, "echo"), filepath.Join(r.dir, "echo")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r.d.Poll()
	}
	if n := len(r.engine.Processes()); n != 0 {
		t.Fatalf("%d processes deployed from a linked folder", n)
	}
	if n := strings.Count(logs.String(), "symbolic link"); n != 1 || !strings.Contains(logs.String(), "bundle=echo") {
		t.Fatalf("%d warnings, want one naming echo:\n%s", n, logs.String())
	}
}
