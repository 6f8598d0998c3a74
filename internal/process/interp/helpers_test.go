package interp

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"go.opentelemetry.io/otel/trace"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/plan"
)

// The interpreter's own tests run instances of compiled plans (the
// compiler may be imported by tests; the interpreter never does) with
// testHost: an engine that stores nothing, binds no run-time address and
// has no registry, which is all an instance evaluating expressions and
// stepping activities in one goroutine needs.

// testHost is a Host for instances no engine runs.
type testHost struct{}

func (testHost) Now() time.Time                                          { return time.Now() }
func (testHost) Logger() *slog.Logger                                    { return slog.New(slog.DiscardHandler) }
func (testHost) MaxSteps() int                                           { return 1_000_000 }
func (testHost) Stored() bool                                            { return false }
func (testHost) Clustered() bool                                         { return false }
func (testHost) BaseURL() string                                         { return "" }
func (testHost) BaseContext() context.Context                            { return context.Background() }
func (testHost) Tracer() trace.Tracer                                    { return nil }
func (testHost) Rest() *RestClient                                       { return nil }
func (testHost) Named(in *Instance)                                      {}
func (testHost) Answering(in *Instance)                                  {}
func (testHost) OpenMail(in *Instance) bool                              { return false }
func (testHost) CloseMail(in *Instance)                                  {}
func (testHost) ReplyTimeout(*Version, *exchange.Exchange) time.Duration { return time.Second }
func (testHost) ListCalling(*Instance, bool)                             {}
func (testHost) SampleEvery() uint64                                     { return 0 }
func (testHost) Ended(*Instance, *exchange.Fault)                        {}
func (testHost) Sleep(ctx context.Context, until time.Time) bool {
	select {
	case <-time.After(time.Until(until)):
		return true
	case <-ctx.Done():
		return false
	}
}
func (testHost) Commit(*Instance, *persist.Checkpoint) error {
	panic("testHost stores nothing")
}
func (testHost) Addressed(*plan.PartnerLink, string, []*etree.Element, *partnerallow.List) exchange.Partner {
	return nil
}

// loadPO compiles the example purchase order (deploy/purchase-order)
// into a version no engine has deployed.
func loadPO(t testing.TB) *Version {
	t.Helper()
	pls, err := compile.LoadBundleWith("../../../deploy/purchase-order", compile.LoadOptions{})
	if err != nil {
		t.Fatalf("load example bundle: %v", err)
	}
	return NewVersions(pls)[0]
}

// poMessage is the body of the workload request testdata/file (the
// engine's tests' testdata), made self-contained as the envelope decoder
// makes it.
func poMessage(t testing.TB, file string) *etree.Element {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromFile(filepath.Join("..", "testdata", file)); err != nil {
		t.Fatal(err)
	}
	body := doc.Root().FindElement("./Body/*").Copy()
	body.CreateAttr("xmlns:po", "urn:example:po")
	return body
}

// editedVersions compiles a copy of the engine's fixture bundle
// testdata/bundles/name in which the first old in file is replaced by new
// (old must occur).
func editedVersions(t testing.TB, name, file, old, new string) ([]*Version, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "bundles", name))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, file)
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s (%v) does not contain %q", file, err, old)
	} else if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	pls, err := compile.LoadBundleWith(dir, compile.LoadOptions{})
	if err != nil {
		return nil, err
	}
	return NewVersions(pls), nil
}
