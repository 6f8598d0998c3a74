package humantask

import (
	"flag"
	"fmt"
	"log/slog"
)

// Config is what orchd serve's flags say of the task engine.
type Config struct {
	// PeopleFile is --people-file: the people directory (FileDirectory);
	// empty means no directory: tasks are created and escalated, but no
	// person can sign in to work on them.
	PeopleFile string
	// MaxChecks is --people-max-checks (Options.MaxAuthChecks).
	MaxChecks int
}

// RegisterFlags defines the task engine's flags on fs.
func RegisterFlags(fs *flag.FlagSet) *Config {
	c := &Config{}
	fs.StringVar(&c.PeopleFile, "people-file", "", "people directory of human tasks: 'user:$2y$...(bcrypt):group,group' a line (chmod 600; read again when it changes); task users sign in with these credentials, never the admin token")
	fs.IntVar(&c.MaxChecks, "people-max-checks", DefaultMaxAuthChecks, "most password checks (bcrypt, tens of ms of CPU each) of task users running at once, over the task API, the inbox and the WS-HT client API; a sign-in finding every slot taken is answered 503 at once")
	return c
}

// AuthChecks is --people-max-checks (0, the default, for a nil c).
func (c *Config) AuthChecks() int {
	if c == nil {
		return 0
	}
	return c.MaxChecks
}

// Directory opens the people file c names (nil when none).
func (c *Config) Directory(log *slog.Logger) (Directory, error) {
	if c == nil || c.PeopleFile == "" {
		return nil, nil
	}
	d, err := LoadDirectory(c.PeopleFile, log)
	if err != nil {
		return nil, fmt.Errorf("--people-file: %w", err)
	}
	return d, nil
}
