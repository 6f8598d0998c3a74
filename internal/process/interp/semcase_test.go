package interp_test

import (
	"fmt"
	"os"
	"strings"
)

// semCase is one parsed case file of testdata/sem (the format is in
// testdata/sem/README.md).
type semCase struct {
	// path is the case file, for failures.
	path string
	// script are the steps, in order.
	script []semStep
	// files are the bundle files the case gives, by name ("e2e.wsdl",
	// "Case.bpel", "deploy.xml", a stylesheet, ...); process is the
	// body of the default process, when the case gives one.
	files   map[string]string
	process string
	// modes are the modes the case runs in: "memory", "persistent".
	modes []string
}

// semStep is one line of a case's script.
type semStep struct {
	line int
	// verb is the first word; args the words after it, the last one
	// holding the rest of the line (an XML payload, a text).
	verb string
	args []string
}

// semArity is how many arguments verb takes (its last one is the rest
// of the line, which may be empty when optional is set); ok is false for
// an unknown verb.
func semArity(verb string) (n int, optional, ok bool) {
	switch verb {
	case "ack":
		return 0, false, true
	case "mode", "await", "open", "reply", "reply-contains", "error", "release", "advance", "deploy-error":
		return 1, false, true
	case "send", "call", "calls":
		return 2, false, true
	case "fault":
		return 2, true, true
	case "start":
		return 3, false, true
	case "partner":
		return 3, true, true
	}
	if n, o, ok := opsArity(verb); ok {
		return n, o, ok
	}
	return semExtArity(verb)
}

// parseSemCase reads the case file at path.
func parseSemCase(path string) (*semCase, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &semCase{path: path, files: map[string]string{}}
	lines := strings.Split(string(b), "\n")
	section, start := "", 0
	var body []string
	flush := func() error {
		if section == "" {
			return nil
		}
		text := strings.Join(body, "\n")
		if section == "process" {
			c.process = text
		} else if strings.Contains(section, ".") {
			c.files[section] = text + "\n"
		} else {
			return fmt.Errorf("%s:%d: unknown section %q (want process or a file name)", path, start, section)
		}
		return nil
	}
	for i, l := range lines {
		if name, ok := sectionName(l); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			section, start, body = name, i+1, nil
			continue
		}
		if section != "" {
			body = append(body, l)
			continue
		}
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		st, err := parseSemStep(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		st.line = i + 1
		if st.verb == "mode" {
			if st.args[0] != "memory" && st.args[0] != "persistent" {
				return nil, fmt.Errorf("%s:%d: mode %q: want memory or persistent", path, i+1, st.args[0])
			}
			c.modes = append(c.modes, st.args[0])
			continue
		}
		c.script = append(c.script, st)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if c.modes == nil {
		c.modes = []string{"memory", "persistent"}
	}
	if c.process == "" && c.files["Case.bpel"] == "" {
		return nil, fmt.Errorf("%s: no process section and no Case.bpel", path)
	}
	if len(c.script) == 0 {
		return nil, fmt.Errorf("%s: no steps", path)
	}
	return c, nil
}

// sectionName reports whether l opens a section ("-- name --").
func sectionName(l string) (string, bool) {
	l = strings.TrimRight(l, " \r")
	if !strings.HasPrefix(l, "-- ") || !strings.HasSuffix(l, " --") || len(l) < 7 {
		return "", false
	}
	return strings.TrimSpace(l[3 : len(l)-3]), true
}

// parseSemStep splits a script line into its verb and arguments.
func parseSemStep(l string) (semStep, error) {
	verb, rest, _ := strings.Cut(l, " ")
	n, optional, ok := semArity(verb)
	if !ok {
		return semStep{}, fmt.Errorf("unknown step %q", verb)
	}
	st := semStep{verb: verb}
	rest = strings.TrimSpace(rest)
	for i := 0; i < n; i++ {
		if i == n-1 {
			st.args = append(st.args, rest)
			break
		}
		w, r, _ := strings.Cut(rest, " ")
		st.args = append(st.args, w)
		rest = strings.TrimSpace(r)
	}
	if n == 0 && rest != "" {
		return semStep{}, fmt.Errorf("%s takes no argument", verb)
	}
	for i, s := range st.args {
		if s == "" && !(optional && i == n-1) {
			return semStep{}, fmt.Errorf("%s wants %d argument(s)", verb, n)
		}
	}
	return st, nil
}
