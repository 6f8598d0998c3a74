package humantask

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/orchd/orchd/internal/persist"
)

// fakeClock is a Clock whose time moves only when a test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the time on by d and runs (in this goroutine, in due
// order) the timers that fell due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}

// testPeople writes a people file of the users with their names plus
// "-secret" as passwords, and returns its directory (bcrypt's lowest
// cost keeps the test fast).
func testPeople(t *testing.T, users map[string]string) *FileDirectory {
	t.Helper()
	var b []byte
	for u, groups := range users {
		h, err := bcrypt.GenerateFromPassword([]byte(u+"-secret"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, u+":"+string(h)+":"+groups+"\n"...)
	}
	path := filepath.Join(t.TempDir(), "people")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDirectory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// examplePeople are the example bundle's people.
var examplePeople = map[string]string{"ann": "managers", "mark": "managers", "dora": "directors", "eve": "", "finn": "finance"}

// openStore opens a bbolt store in dir (a real instance store).
func openStore(t *testing.T, dir string) *persist.Store {
	t.Helper()
	st, err := persist.Open(filepath.Join(dir, "orchd.db"), persist.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// exampleEngine is an engine over a real bbolt store with the example
// bundle's definitions deployed, on a fake clock.
func exampleEngine(t *testing.T) (*Engine, *fakeClock, *persist.Store) {
	t.Helper()
	dir := t.TempDir()
	st := openStore(t, dir)
	t.Cleanup(func() { st.Close() })
	clk := newFakeClock()
	e := New(Options{Store: st, Directory: testPeople(t, examplePeople), Clock: clk})
	t.Cleanup(e.Close)
	if err := e.Deploy("expense-approval", 1, "../../deploy/expense-approval"); err != nil {
		t.Fatal(err)
	}
	return e, clk, st
}

// who is the identity of a user of the example's people.
func who(t *testing.T, e *Engine, user string) Identity {
	t.Helper()
	id, err := e.Authenticate(user, user+"-secret")
	if err != nil {
		t.Fatalf("%s: %v", user, err)
	}
	return id
}
