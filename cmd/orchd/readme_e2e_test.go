package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tourMarker opens the README's tour: the ```sh block after it is what
// TestDocTours runs.
const tourMarker = "<!-- tour:"

// tourStep is one command of the README's tour and what its output must
// contain (the words of the "# -> ..." lines after it).
type tourStep struct {
	line   int // in README.md
	cmd    string
	expect []string
}

// readTour reads the tour block of the README at path: commands (a
// trailing backslash joins the next line), comments skipped, each
// "# -> A B" line adding A and B to the expectations of the command
// before it.
func readTour(path string) ([]tourStep, error) { return readBlock(path, tourMarker) }

// readBlock reads the ```sh block that follows the line starting with
// marker in the Markdown file at path, as readTour does.
func readBlock(path, marker string) ([]tourStep, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, marker) {
			start = i + 1
			break
		}
	}
	if start < 0 || start >= len(lines) || strings.TrimSpace(lines[start]) != "```sh" {
		return nil, fmt.Errorf("%s: no %q line followed by a ```sh block", path, marker)
	}
	var steps []tourStep
	var cont *tourStep
	for i := start + 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "```":
			if cont != nil {
				return nil, fmt.Errorf("%s:%d: the tour ends inside a continued command", path, i+1)
			}
			if len(steps) == 0 {
				return nil, fmt.Errorf("%s:%d: the tour block holds no command", path, start+1)
			}
			return steps, nil
		case cont != nil:
			cont.cmd += " " + strings.TrimSuffix(l, `\`)
			if !strings.HasSuffix(l, `\`) {
				steps = append(steps, *cont)
				cont = nil
			}
		case strings.HasPrefix(l, "# ->"):
			if len(steps) == 0 {
				return nil, fmt.Errorf("%s:%d: an expected output before any command", path, i+1)
			}
			steps[len(steps)-1].expect = append(steps[len(steps)-1].expect, strings.Fields(strings.TrimPrefix(l, "# ->"))...)
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasSuffix(l, `\`):
			cont = &tourStep{line: i + 1, cmd: strings.TrimSuffix(l, `\`)}
		default:
			steps = append(steps, tourStep{line: i + 1, cmd: l})
		}
	}
	return nil, fmt.Errorf("%s: the tour's ```sh block is not closed", path)
}

// cloneTree copies the repository's files (tracked, and new ones git
// does not ignore: what a clone of this working tree would hold) from
// root into dst.
func cloneTree(t *testing.T, root, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("listing the repository's files (git ls-files in %s): %v", root, err)
	}
	n := 0
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("git ls-files in %s listed no file", root)
	}
}

// background is a tour command started with a trailing &.
type background struct {
	step tourStep
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan error
}

// guideMarker opens the command block of docs/first-bundle.md.
const guideMarker = "<!-- guide:"

// TestDocTours runs the README's tour and docs/first-bundle.md's guide,
// command by command, each in a copy of the repository's files in an
// empty directory (nothing beside it), as a newcomer would after cloning:
// it builds orchd, starts it with the bundles, posts the shipped requests
// and checks each "# ->" line. It changes the commands in one way only:
// the address 127.0.0.1:8080 becomes a free port (serve gets --listen,
// orchd ctl ORCHD_SERVER), so that it does not collide with another orchd
// on the machine. Both pages start the mock partners on their WSDL
// addresses, 127.0.0.1:9101 and :9102: the two run side by side (and
// beside the package's other parallel tests) but take turns from the
// step that starts the mock partners to the end.
func TestDocTours(t *testing.T) {
	t.Parallel() // long and mostly building or waiting: runs beside the other parallel tests at the end
	var mockPorts sync.Mutex
	pages := []struct {
		name, path, marker string
	}{
		{name: "README", path: "README.md"},
		{name: "first-bundle", path: "docs/first-bundle.md", marker: guideMarker},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			var steps []tourStep
			var err error
			if p.marker == "" {
				steps, err = readTour("../../" + p.path)
			} else {
				steps, err = readBlock("../../"+p.path, p.marker)
			}
			if err != nil {
				t.Fatal(err)
			}
			runTour(t, p.path, steps, &mockPorts)
		})
	}
}

// runTour runs steps, the shell commands of the Markdown page doc, as
// TestDocTours says: in a copy of the repository, on a free port. From
// the first step that starts the mock partners on their fixed addresses
// to the end of the tour it holds mockPorts.
func runTour(t *testing.T, doc string, steps []tourStep, mockPorts *sync.Mutex) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s's commands need %s on PATH: %v", doc, tool, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	dir := filepath.Join(t.TempDir(), "orchd")
	cloneTree(t, "../..", dir)
	env := append(os.Environ(), "ORCHD_SERVER=http://"+addr)

	var bg []*background
	locked := false
	t.Cleanup(func() {
		for _, b := range bg {
			if b.cmd.ProcessState == nil {
				_ = b.cmd.Process.Kill()
				<-b.done
			}
		}
		if locked {
			mockPorts.Unlock()
		}
	})
	for _, st := range steps {
		cmd := strings.ReplaceAll(st.cmd, "127.0.0.1:8080", addr)
		where := fmt.Sprintf("%s:%d: %s", doc, st.line, st.cmd)
		if !locked && strings.Contains(cmd, "--mock-partners") {
			mockPorts.Lock()
			locked = true
			for _, a := range []string{"127.0.0.1:9101", "127.0.0.1:9102"} {
				l, err := net.Listen("tcp", a)
				if err != nil {
					t.Fatalf("%s: the mock partner address %s is taken: %v", where, a, err)
				}
				l.Close()
			}
		}
		if n, ok := strings.CutPrefix(cmd, "kill %"); ok {
			i, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil || i < 1 || i > len(bg) {
				t.Fatalf("%s: no background job %s", where, n)
			}
			stopBackground(t, where, bg[i-1])
			continue
		}
		if c, ok := strings.CutSuffix(cmd, "&"); ok {
			if strings.Contains(c, " serve") && !strings.Contains(c, "--listen") {
				c = strings.TrimSpace(c) + " --listen " + addr
			}
			bg = append(bg, startBackground(t, where, dir, env, st, c))
			continue
		}
		run := exec.Command("bash", "-c", cmd)
		run.Dir, run.Env = dir, env
		out, err := run.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", where, err, out)
		}
		for _, want := range st.expect {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("%s: the output lacks %q:\n%s", where, want, out)
			}
		}
		t.Logf("%s: ok", where)
	}
	for i, b := range bg {
		if b.cmd.ProcessState == nil {
			t.Errorf("%s:%d: background job %%%d is still running at the end of the tour (no kill %%%d)", doc, b.step.line, i+1, i+1)
		}
	}
}

// startBackground starts c and waits until it logs that it serves
// ("msg=serving", the line the README says to wait for), failing when it
// exits first.
func startBackground(t *testing.T, where, dir string, env []string, st tourStep, c string) *background {
	t.Helper()
	b := &background{step: st, out: &lockedBuffer{}, done: make(chan error, 1)}
	b.cmd = exec.Command("bash", "-c", "exec "+c)
	b.cmd.Dir, b.cmd.Env = dir, env
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	// A hang guard, not a measurement: orchd serves within a second or two.
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(b.out.String(), "msg=serving") {
		select {
		case err := <-b.done:
			b.done <- err
			t.Fatalf("%s: exited before serving: %v\n%s", where, err, b.out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no msg=serving in its log after 2 minutes:\n%s", where, b.out.String())
		}
	}
	t.Logf("%s: serving", where)
	return b
}

// stopBackground sends SIGTERM to b, as kill does, and requires a clean
// exit.
func stopBackground(t *testing.T, where string, b *background) {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if err := <-b.done; err != nil {
		t.Fatalf("%s: the job exited with %v after SIGTERM:\n%s", where, err, b.out.String())
	}
	t.Logf("%s: stopped", where)
}

// TestReadTour checks the reader on the shapes the tour uses.
func TestReadTour(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []tourStep
		err        string
	}{
		{name: "commands, continuations, expectations",
			text: "x\n<!-- tour: -->\n```sh\n# comment\nmake \\\n  build\n# -> a b\n# -> c\n\nserve &\nkill %1\n```\n",
			want: []tourStep{{line: 5, cmd: "make  build", expect: []string{"a", "b", "c"}}, {line: 10, cmd: "serve &"}, {line: 11, cmd: "kill %1"}}},
		{name: "no marker", text: "```sh\nls\n```\n", err: "no \"<!-- tour:\" line"},
		{name: "marker without block", text: "<!-- tour: -->\nls\n", err: "followed by a ```sh block"},
		{name: "unclosed", text: "<!-- tour: -->\n```sh\nls\n", err: "not closed"},
		{name: "empty", text: "<!-- tour: -->\n```sh\n# only\n```\n", err: "holds no command"},
		{name: "expectation first", text: "<!-- tour: -->\n```sh\n# -> x\nls\n```\n", err: "before any command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "README.md")
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readTour(p)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
