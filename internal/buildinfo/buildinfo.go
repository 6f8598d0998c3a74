package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Info is what the build information says of this binary.
type Info struct {
	// Version is the main module's version, "(devel)" for a build from
	// a working tree.
	Version string `json:"version"`
	// Revision is the VCS revision built from, with "+dirty" when the
	// tree had changes; "unknown" when the build did not record it
	// (go test, go run, -buildvcs=false).
	Revision string `json:"revision"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
}

// Read is the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(devel)", Revision: "unknown", GoVersion: "unknown"}
	}
	return From(bi)
}

// From is the Info of build information bi.
func From(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, Revision: "unknown", GoVersion: bi.GoVersion}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		in.Revision = rev
		if modified == "true" {
			in.Revision += "+dirty"
		}
	}
	return in
}

// String is the line orchd version prints:
// "orchd VERSION (revision REV) built with GOVERSION".
func (in Info) String() string {
	var b strings.Builder
	b.WriteString("orchd ")
	b.WriteString(in.Version)
	b.WriteString(" (revision ")
	b.WriteString(in.Revision)
	b.WriteString(") built with ")
	b.WriteString(in.GoVersion)
	return b.String()
}
