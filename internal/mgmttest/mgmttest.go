// Package mgmttest serves a real management API on loopback for the
// tests of its clients (internal/mgmtclient, internal/ctl): the admin
// handler over the real backend, engine, hot deployer and SOAP front
// door, with the echo bundle (internal/echotest) deployed. It is for
// tests only; nothing but tests may import it.
package mgmttest

import (
	"net/http/httptest"
	"testing"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/echotest"
	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/hotdeploy"
	"github.com/orchd/orchd/internal/mgmtbackend"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/soap"
)

// Server is a running management API and the SOAP endpoint of its
// engine.
type Server struct {
	// API is the management API's base URL (scheme://host:port).
	API string
	// SOAP is the front door's base URL, where the echo process is
	// served at echotest.Path.
	SOAP string
	// Deploy is the deploy directory.
	Deploy string
}

// Serve starts the API, its mutations behind token (empty: read-only),
// over Backend. It stops when the test ends.
func Serve(t testing.TB, token string) *Server {
	t.Helper()
	b, s := Backend(t, nil)
	api := httptest.NewServer(admin.New(admin.Options{Backend: b, Token: token}))
	t.Cleanup(api.Close)
	s.API = api.URL
	return s
}

// Backend is a real management backend with the echo bundle deployed
// as version 1 answering "one-<id>" (and timeline, when not nil, keeping
// its events), and its server with the SOAP and deploy fields set (API
// empty).
func Backend(t testing.TB, timeline *events.Timeline) (*mgmtbackend.Backend, *Server) {
	t.Helper()
	engine := process.NewEngine(process.Options{})
	t.Cleanup(engine.Close)
	front := soap.NewServer(soap.ServerOptions{})
	soapSrv := httptest.NewServer(front)
	t.Cleanup(soapSrv.Close)
	dir := t.TempDir()
	echotest.Write(t, dir, "echo", "one", true)
	d, err := hotdeploy.New(hotdeploy.Options{Dir: dir, Engine: engine, Front: front})
	if err != nil {
		t.Fatal(err)
	}
	d.Poll()
	d.Poll() // the second poll sees the folder stable and deploys it
	b := mgmtbackend.New(mgmtbackend.Options{Engine: engine, Deployer: d, Timeline: timeline})
	return b, &Server{SOAP: soapSrv.URL, Deploy: dir}
}
