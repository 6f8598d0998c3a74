package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want Info
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}},
			Info{"v1.2.3", "abc123", "go1.26.8"}},
		{"dirty tree", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}},
			Info{"(devel)", "abc123+dirty", "go1.26.8"}},
		{"no VCS", debug.BuildInfo{GoVersion: "go1.26.8"}, Info{"(devel)", "unknown", "go1.26.8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := From(&tc.bi); got != tc.want {
				t.Errorf("From = %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := Read().GoVersion; got != runtime.Version() {
		t.Errorf("Read().GoVersion = %q, want %q", got, runtime.Version())
	}
	want := "orchd v1 (revision r) built with go1"
	if got := (Info{"v1", "r", "go1"}).String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
