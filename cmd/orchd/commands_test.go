package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

// runInProcess runs a command line in process (run, no binary).
func runInProcess(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// flagsOf are the names of command c's flags.
func flagsOf(c command) []string {
	fs := c.flagSet(io.Discard)
	if c.flags != nil {
		c.flags(fs)
	} else {
		fs = c.globals()
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

func TestCommandListing(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		onStderr bool
	}{
		{nil, 2, true},
		{[]string{"help"}, 0, false},
		{[]string{"-h"}, 0, false},
		{[]string{"--help"}, 0, false},
		{[]string{"frobnicate"}, 2, true},
	} {
		code, out, errs := runInProcess(tc.args...)
		listing := out
		if tc.onStderr {
			listing = errs
		}
		if code != tc.code {
			t.Errorf("orchd %v: exit %d, want %d", tc.args, code, tc.code)
		}
		for _, c := range commands() {
			if !strings.Contains(listing, "\n  "+c.name+" ") || !strings.Contains(listing, c.summary) {
				t.Errorf("orchd %v: the listing lacks %s and its line:\n%s", tc.args, c.name, listing)
			}
		}
		if strings.Contains(out+errs, "Usage of serve") {
			t.Errorf("orchd %v prints serve's flags", tc.args)
		}
	}
	for _, want := range []string{"serve", "ctl", "instances", "bench", "xpath", "mock-partners"} {
		if _, ok := lookup(want); !ok {
			t.Errorf("no command %s in the table", want)
		}
	}
}

func TestCommandHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runInProcess("help", c.name)
			if code != 0 || errs != "" || !strings.Contains(out, "usage: orchd "+c.name) {
				t.Fatalf("orchd help %s: exit %d, %q %q", c.name, code, out, errs)
			}
			for _, f := range flagsOf(c) {
				if !strings.Contains(out, "-"+f) {
					t.Errorf("orchd help %s lacks its flag --%s", c.name, f)
				}
			}
			// orchd NAME --help shows the same (on stderr, as flag does).
			code, out2, errs2 := runInProcess(c.name, "--help")
			if code != 0 || out2 != "" || !strings.Contains(errs2, "usage: orchd "+c.name) {
				t.Fatalf("orchd %s --help: exit %d, %q %q", c.name, code, out2, errs2)
			}
			if c.flags != nil && errs2 != out {
				t.Errorf("orchd %s --help differs from orchd help %s:\n%s\n---\n%s", c.name, c.name, errs2, out)
			}
		})
	}
	if code, _, errs := runInProcess("help", "nope"); code != 2 || !strings.Contains(errs, `unknown command "nope"`) {
		t.Errorf("orchd help nope: exit %d, %q", code, errs)
	}
	if code, _, errs := runInProcess("bench", "--no-such-flag"); code != 2 || !strings.Contains(errs, "no-such-flag") {
		t.Errorf("orchd bench --no-such-flag: exit %d, %q", code, errs)
	}
}

func TestCommandReference(t *testing.T) {
	code, out, errs := runInProcess("help", "--all")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "# orchd commands\n") {
		t.Fatalf("orchd help --all: exit %d, %q", code, errs)
	}
	for _, c := range commands() {
		section, _, _ := strings.Cut(out[strings.Index(out, "\n## orchd "+c.name+"\n")+1:], "\n## ")
		if section == "" {
			t.Fatalf("no section for %s", c.name)
		}
		for _, f := range flagsOf(c) {
			if !strings.Contains(section, "| `--"+f) {
				t.Errorf("the reference of %s lacks --%s", c.name, f)
			}
		}
	}
	if !strings.Contains(out, "| `--deploy-poll duration` | `3s` |") {
		t.Error("the reference does not give serve's --deploy-poll with its default")
	}
	// The same on every run: it is a generated page.
	if _, again, _ := runInProcess("help", "--all"); again != out {
		t.Error("orchd help --all differs between two runs")
	}
}
