package mgmt

import "context"

// Migrator is the part of a Backend that moves waiting instances of one
// version of a process to another (POST /api/v1/processes/{name}/migrate).
// A Backend without it answers that route 501.
type Migrator interface {
	Migrate(ctx context.Context, r MigrateRequest) (*MigrateResult, error)
}

// MigrateRequest asks to move the waiting instances of version From of
// Process that Query selects (its Process, Version and State are
// Migrate's own) to version To, at most Max of them (0: 100).
type MigrateRequest struct {
	Process string `json:"process"`
	From    int    `json:"from"`
	To      int    `json:"to"`
	// DryRun lists what would move and why the rest cannot, and moves
	// nothing.
	DryRun bool  `json:"dryRun,omitempty"`
	Query  Query `json:"query,omitzero"`
	// Variables maps a variable of From renamed in To (old -> new; an
	// empty new name drops its value).
	Variables map[string]string `json:"variables,omitempty"`
	Max       int               `json:"max,omitempty"`
}

// MigrateResult is what a migration moved (or, dry, would move) and,
// for each instance that cannot move, why.
type MigrateResult struct {
	Process string `json:"process"`
	From    int    `json:"from"`
	To      int    `json:"to"`
	DryRun  bool   `json:"dryRun"`
	// Matched counts the waiting instances of From selected.
	Matched int `json:"matched"`
	// Moved lists the instances now on To (dry: that would be).
	Moved []string `json:"moved"`
	// Refused lists the instances that cannot move, each with the
	// activities, variables or sets that differ.
	Refused []MigrateRefusal `json:"refused,omitempty"`
	// Truncated says more instances matched than Max.
	Truncated bool `json:"truncated"`
}

// MigrateRefusal is one instance that cannot move, and why.
type MigrateRefusal struct {
	ID      string   `json:"id"`
	Reasons []string `json:"reasons"`
}
