package ctl

import (
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
)

// TaskUsage is the usage of the task verbs (part of Usage).
const TaskUsage = `  tasks --user U [--state S]... [--name N] [--role R] [--limit N] [-q]
                                    the human tasks user U may see (default: the open ones);
                                    -q prints their ids only
  task VERB ID --user U [ARGS]      act on a human task as user U: claim, start, stop, release,
                                    complete --output XML|@FILE, fail --fault NAME [--detail XML],
                                    skip, delegate --to USER, forward --to USER[,USER] [--groups G,G],
                                    suspend, resume, priority --priority N, comment --text T, show

The task verbs authenticate as a person of orchd serve --people-file, never with the admin
token: --password-file FILE, else $ORCHD_PASSWORD_FILE, else the password in $ORCHD_PASSWORD.`

// taskFlags are the person's credentials every task verb takes.
type taskFlags struct {
	user, passwordFile string
}

func (f *taskFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.user, "user", os.Getenv("ORCHD_USER"), "the person (a user of orchd serve --people-file); default $ORCHD_USER")
	fs.StringVar(&f.passwordFile, "password-file", os.Getenv("ORCHD_PASSWORD_FILE"), "file holding the person's password; default $ORCHD_PASSWORD_FILE, else $ORCHD_PASSWORD")
}

// connectAs makes a client that sends f's person's credentials.
func (r *ctlRun) connectAs(f *taskFlags) error {
	if f.user == "" {
		return r.usagef("the task verbs need --user (a person of orchd serve --people-file)")
	}
	pass := os.Getenv("ORCHD_PASSWORD")
	if f.passwordFile != "" {
		b, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return r.usagef("--password-file: %v", err)
		}
		pass = strings.TrimRight(string(b), "\r\n")
	}
	if pass == "" {
		return r.usagef("no password for %s: give --password-file, $ORCHD_PASSWORD_FILE or $ORCHD_PASSWORD", f.user)
	}
	c, err := mgmtclient.New(r.g.server, mgmtclient.Options{HTTP: &http.Client{Timeout: time.Minute}, User: f.user, Password: pass})
	if err != nil {
		return r.usagef("--server %v", err)
	}
	r.c = c
	return nil
}

// stringsFlag is a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func (r *ctlRun) tasks(args []string) error {
	var tf taskFlags
	var states stringsFlag
	var name, role string
	var limit int
	var quiet bool
	if _, err := r.flags("tasks", args, 0, func(fs *flag.FlagSet) {
		tf.register(fs)
		fs.Var(&states, "state", "a state to list (READY, RESERVED, IN_PROGRESS, SUSPENDED, COMPLETED, FAILED, EXITED, OBSOLETE, ERROR); repeatable")
		fs.StringVar(&name, "name", "", "only tasks of this definition")
		fs.StringVar(&role, "role", "", "only tasks where the person has this role (potentialOwners, actualOwner, businessAdministrators, ...)")
		fs.IntVar(&limit, "limit", 0, "at most this many")
		fs.BoolVar(&quiet, "q", false, "print the tasks' ids only")
	}); err != nil {
		return err
	}
	if err := r.connectAs(&tf); err != nil {
		return err
	}
	q := url.Values{}
	for _, s := range states {
		for _, x := range splitList(s) {
			q.Add("state", strings.ToUpper(x))
		}
	}
	if name != "" {
		q.Set("name", name)
	}
	if role != "" {
		q.Set("role", role)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var ts []mgmt.Task
	return r.get("/tasks", q, &ts, func() {
		if quiet {
			for _, t := range ts {
				fmt.Fprintln(r.stdout, t.ID)
			}
			return
		}
		if len(ts) == 0 {
			fmt.Fprintln(r.stdout, "no task")
			return
		}
		tw := table(r.stdout, "ID\tTASK\tSTATE\tPRIORITY\tOWNER\tCREATED\tSUBJECT")
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", t.ID, t.Name, t.State, t.Priority, orNone(t.ActualOwner), when(t.Created), oneLineText(t.Subject, 60))
		}
		tw.Flush()
	})
}

// taskVerbs maps the task verbs to the API's operations.
var taskVerbs = map[string]string{"claim": "claim", "start": "start", "stop": "stop", "release": "release",
	"complete": "complete", "fail": "fail", "skip": "skip", "delegate": "delegate", "forward": "forward",
	"suspend": "suspend", "resume": "resume", "priority": "setPriority", "comment": "addComment"}

func (r *ctlRun) task(args []string) error {
	if len(args) == 0 {
		return r.usagef("task: give a verb (claim, start, stop, release, complete, fail, skip, delegate, forward, suspend, resume, priority, comment, show)")
	}
	verb := args[0]
	op, ok := taskVerbs[verb]
	if !ok && verb != "show" {
		names := make([]string, 0, len(taskVerbs)+1)
		for v := range taskVerbs {
			names = append(names, v)
		}
		names = append(names, "show")
		slices.Sort(names)
		return r.usagef("task: unknown verb %q (want one of %s)", verb, strings.Join(names, ", "))
	}
	var tf taskFlags
	var output, fault, detail, to, groups, text string
	prio := -1
	ids, err := r.flags("task "+verb, args[1:], 1, func(fs *flag.FlagSet) {
		tf.register(fs)
		switch verb {
		case "complete":
			fs.StringVar(&output, "output", "", "the output: its XML element, or @FILE")
		case "fail":
			fs.StringVar(&fault, "fault", "", "the fault's name (a fault of the task's operation)")
			fs.StringVar(&detail, "detail", "", "the fault's detail (XML), or @FILE")
		case "delegate":
			fs.StringVar(&to, "to", "", "the user to delegate to")
		case "forward":
			fs.StringVar(&to, "to", "", "users to forward to, comma-separated")
			fs.StringVar(&groups, "groups", "", "groups to forward to, comma-separated")
		case "priority":
			fs.IntVar(&prio, "priority", -1, "the priority, 0 (highest) to 10 (lowest)")
		case "comment":
			fs.StringVar(&text, "text", "", "the comment")
		}
	})
	if err != nil {
		return err
	}
	if err := r.connectAs(&tf); err != nil {
		return err
	}
	id := ids[0]
	var t mgmt.Task
	show := func() {
		fmt.Fprintf(r.stdout, "%s: %s", t.ID, t.State)
		if t.ActualOwner != "" {
			fmt.Fprintf(r.stdout, " (owner %s)", t.ActualOwner)
		}
		fmt.Fprintln(r.stdout)
	}
	if verb == "show" {
		return r.get("/tasks/"+url.PathEscape(id), nil, &t, func() { showTask(r, &t) })
	}
	act := mgmt.TaskAction{}
	if output, err = fileOrText(output); err != nil {
		return r.usagef("--output: %v", err)
	}
	if detail, err = fileOrText(detail); err != nil {
		return r.usagef("--detail: %v", err)
	}
	act.Output, act.FaultName, act.FaultDetail, act.Comment = output, fault, detail, text
	switch verb {
	case "delegate":
		act.User = to
	case "forward":
		act.Users, act.Groups = splitList(to), splitList(groups)
	case "priority":
		if prio < 0 {
			return r.usagef("task priority: give --priority N (0 to 10)")
		}
		act.Priority = &prio
	}
	err = r.c.PostJSON(r.ctx, "/tasks/"+url.PathEscape(id)+"/"+op, act, &t)
	if err != nil {
		return err
	}
	if r.g.json {
		return writeIndented(r.stdout, t)
	}
	show()
	return nil
}

// fileOrText reads @FILE, or returns s.
func fileOrText(s string) (string, error) {
	if f, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(f)
		return string(b), err
	}
	return s, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// showTask prints one task.
func showTask(r *ctlRun, t *mgmt.Task) {
	w := r.stdout
	fmt.Fprintf(w, "task %s (%s)\n", t.ID, t.Name)
	fmt.Fprintf(w, "state: %s  priority: %d  owner: %s\n", t.State, t.Priority, orNone(t.ActualOwner))
	if t.Subject != "" {
		fmt.Fprintf(w, "subject: %s\n", t.Subject)
	}
	roles := make([]string, 0, len(t.People))
	for k := range t.People {
		roles = append(roles, k)
	}
	slices.Sort(roles)
	for _, k := range roles {
		p := t.People[k]
		fmt.Fprintf(w, "%s: users %s groups %s\n", k, orNone(strings.Join(p.Users, ",")), orNone(strings.Join(p.Groups, ",")))
	}
	for _, d := range t.Deadlines {
		st := "pending"
		switch {
		case d.Fired:
			st = "fired"
		case d.Met:
			st = "met"
		}
		fmt.Fprintf(w, "deadline %s (%s): %s, %s\n", d.Name, d.Kind, d.Due.Format(time.RFC3339), st)
	}
	if t.Input != "" {
		fmt.Fprintf(w, "input: %s\n", oneLineText(t.Input, 200))
	}
	if t.Output != "" {
		fmt.Fprintf(w, "output: %s\n", oneLineText(t.Output, 200))
	}
	for _, c := range t.Comments {
		fmt.Fprintf(w, "comment by %s at %s: %s\n", c.By, c.At.Format(time.RFC3339), c.Text)
	}
}
