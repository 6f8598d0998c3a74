package humantask

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Directory is where people come from: it authenticates users and knows
// who belongs to which group. FileDirectory is the one orchd has; an LDAP
// or OIDC directory implements the same interface. Its methods are safe
// for concurrent use.
type Directory interface {
	// Authenticate checks user's password and returns its identity. An
	// unknown user and a wrong password are the same error (ErrAuth),
	// answered in the same time.
	Authenticate(user, password string) (Identity, error)
	// Lookup returns a known user's identity (its groups), without a
	// password: the engine uses it to resolve who holds a role.
	Lookup(user string) (Identity, bool)
	// Members lists the users of a group (nil for an unknown group).
	Members(group string) []string
}

// FileDirectory is a Directory read from a file of lines
//
//	# comment
//	alice:$2y$10$...:managers,staff
//	bob:$2y$10$...
//
// one user a line: the name, a bcrypt hash of the password (htpasswd
// -B, as the WS-Security users file has it) and the groups it belongs
// to, comma-separated. The file is read again when it changes (checked
// at most once a second, on use); a change that does not parse keeps the
// users read before and logs the problem. Like the WS-Security users
// file, it must not be readable by group or others.
type FileDirectory struct {
	path  string
	log   *slog.Logger
	now   func() time.Time
	dummy []byte // a bcrypt hash an unknown user is checked against

	mu      sync.Mutex
	users   map[string]*person
	groups  map[string][]string
	mod     time.Time
	size    int64
	checked time.Time
}

// person is one user of the file.
type person struct {
	hash   []byte
	groups []string
}

// reloadEvery bounds how often FileDirectory looks at its file.
const reloadEvery = time.Second

// ErrPeopleFileMode is the error of a people file that group or others
// may read or write.
var ErrPeopleFileMode = errors.New("the people file may be read or written by users other than its owner (chmod 600)")

// LoadDirectory reads the people file at path. log receives reload
// problems (nil discards them).
func LoadDirectory(path string, log *slog.Logger) (*FileDirectory, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dummy, err := bcrypt.GenerateFromPassword([]byte("no such user"), bcrypt.DefaultCost)
	if err != nil {
		return nil, fmt.Errorf("people file: %w", err)
	}
	d := &FileDirectory{path: path, log: log, now: time.Now, dummy: dummy}
	if err := d.load(); err != nil {
		return nil, err
	}
	return d, nil
}

// load reads the file.
func (d *FileDirectory) load() error {
	st, err := os.Stat(d.path)
	if err != nil {
		return fmt.Errorf("people file: %w", err)
	}
	if st.Mode()&fs.ModePerm&0o077 != 0 {
		return fmt.Errorf("%s (mode %04o): %w", d.path, st.Mode()&fs.ModePerm, ErrPeopleFileMode)
	}
	b, err := os.ReadFile(d.path)
	if err != nil {
		return fmt.Errorf("people file: %w", err)
	}
	users, err := ParsePeople(b)
	if err != nil {
		return fmt.Errorf("people file %s: %w", d.path, err)
	}
	groups := map[string][]string{}
	for name, p := range users {
		for _, g := range p.groups {
			groups[g] = append(groups[g], name)
		}
	}
	for _, m := range groups {
		slices.Sort(m)
	}
	d.mu.Lock()
	d.users, d.groups, d.mod, d.size = users, groups, st.ModTime(), st.Size()
	d.mu.Unlock()
	return nil
}

// refresh reads the file again when it changed since it was last read
// (looked at no more than once a second).
func (d *FileDirectory) refresh() {
	d.mu.Lock()
	now := d.now()
	if now.Sub(d.checked) < reloadEvery {
		d.mu.Unlock()
		return
	}
	d.checked = now
	mod, size := d.mod, d.size
	d.mu.Unlock()
	st, err := os.Stat(d.path)
	if err != nil {
		d.log.Warn("people file not read; the users read before stay", slog.String("file", d.path), slog.Any("err", err))
		return
	}
	if st.ModTime().Equal(mod) && st.Size() == size {
		return
	}
	if err := d.load(); err != nil {
		d.log.Warn("people file not reloaded; the users read before stay", slog.Any("err", err))
		return
	}
	d.log.Info("people file reloaded", slog.String("file", d.path))
}

// Reload reads the file now.
func (d *FileDirectory) Reload() error { return d.load() }

// Authenticate implements Directory. An unknown user's password is
// checked against a hash of its own, so that the answer takes as long
// as a wrong password's.
func (d *FileDirectory) Authenticate(user, password string) (Identity, error) {
	d.refresh()
	d.mu.Lock()
	p := d.users[user]
	d.mu.Unlock()
	hash := d.dummy
	if p != nil {
		hash = p.hash
	}
	if err := bcrypt.CompareHashAndPassword(hash, []byte(password)); err != nil || p == nil {
		return Identity{}, ErrAuth
	}
	return Identity{User: user, Groups: slices.Clone(p.groups)}, nil
}

// Lookup implements Directory.
func (d *FileDirectory) Lookup(user string) (Identity, bool) {
	d.refresh()
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.users[user]
	if p == nil {
		return Identity{}, false
	}
	return Identity{User: user, Groups: slices.Clone(p.groups)}, true
}

// Members implements Directory.
func (d *FileDirectory) Members(group string) []string {
	d.refresh()
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.groups[group])
}

// ParsePeople reads the lines of a people file. A malformed line is an
// error naming its number (never its content: it holds a hash).
func ParsePeople(b []byte) (map[string]*person, error) {
	users := map[string]*person{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: want user:$2y$...(bcrypt)[:group,group]", n)
		}
		if strings.ContainsAny(name, " \t,") {
			return nil, fmt.Errorf("line %d: a user name has no blanks or commas", n)
		}
		hash, groups, _ := strings.Cut(rest, ":")
		if !isBcrypt(hash) {
			return nil, fmt.Errorf("line %d: user %q: the password is not a bcrypt hash ($2a$, $2b$, $2y$)", n, name)
		}
		if users[name] != nil {
			return nil, fmt.Errorf("line %d: user %q given twice", n, name)
		}
		p := &person{hash: []byte(hash)}
		for _, g := range strings.Split(groups, ",") {
			if g = strings.TrimSpace(g); g != "" && !slices.Contains(p.groups, g) {
				p.groups = append(p.groups, g)
			}
		}
		users[name] = p
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return users, nil
}

// isBcrypt reports whether s looks like a bcrypt hash.
func isBcrypt(s string) bool {
	return len(s) == 60 && (strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$"))
}
