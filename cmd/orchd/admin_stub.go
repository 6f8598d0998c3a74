package main

import (
	"context"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/process"
)

// TEMPORARY until the adapter (cmd/orchd/mgmt.go) lands on main.
type stubBackend struct{}

func managementBackend(*process.Engine, *deployer) mgmt.Backend { return stubBackend{} }

func (stubBackend) Processes(context.Context) ([]mgmt.Process, error) {
	return nil, mgmt.ErrUnavailable
}
func (stubBackend) Process(context.Context, string, int) (*mgmt.Process, error) {
	return nil, mgmt.ErrUnavailable
}
func (stubBackend) SetActive(context.Context, string, int, bool) error { return mgmt.ErrUnavailable }
func (stubBackend) Bundles(context.Context) ([]mgmt.Bundle, error)     { return nil, mgmt.ErrUnavailable }
func (stubBackend) Deploy(context.Context, string, []byte) (*mgmt.Bundle, error) {
	return nil, mgmt.ErrUnavailable
}
func (stubBackend) Undeploy(context.Context, string) error { return mgmt.ErrUnavailable }
func (stubBackend) Instances(context.Context, mgmt.Query) (*mgmt.Page, error) {
	return nil, mgmt.ErrUnavailable
}
func (stubBackend) Instance(context.Context, string) (*mgmt.InstanceDetail, error) {
	return nil, mgmt.ErrUnavailable
}
func (stubBackend) Act(context.Context, string, mgmt.Action) error { return mgmt.ErrUnavailable }
