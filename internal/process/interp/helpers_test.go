package interp

import (
	"context"
	"fmt"
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
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/membudget"
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
func (testHost) NewMemID() string                                        { return "m1" }
func (testHost) MaxSteps() int                                           { return 1_000_000 }
func (testHost) MemoryBounds() membudget.Bounds                          { return membudget.Bounds{} }
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
func (testHost) Sample(uint64) bool                                      { return false }
func (testHost) Ended(*Instance, *exchange.Fault)                        {}
func (testHost) Sleep(ctx context.Context, due int64) bool {
	until := time.Unix(0, due)
	select {
	case <-time.After(time.Until(until)):
		return true
	case <-ctx.Done():
		return false
	}
}
func (testHost) Commit(*Instance, *persist.Checkpoint, bool) error {
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

// The expression tests evaluate on instances of the engine's fixture
// bundles (testdata/bundles), whose messages are tns:req.

const nsTest = "urn:test"

// loadFixture compiles the engine's fixture bundle testdata/bundles/name.
func loadFixture(t testing.TB, name string) []*Version {
	t.Helper()
	pls, err := compile.LoadBundleWith(filepath.Join("..", "testdata", "bundles", name), compile.LoadOptions{})
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return NewVersions(pls)
}

// varResolver resolves variables of a compiled process by name.
type varResolver struct{ p *Version }

func (r varResolver) LookupVar(name string) *expr.Var {
	for _, v := range r.p.Vars {
		if v.Name == name {
			return v
		}
	}
	return nil
}

func (r varResolver) PropertyPath(string, string, *etree.Element, map[string]string) (string, error) {
	return "", fmt.Errorf("no properties here")
}

func parseElement(t testing.TB, src string) *etree.Element {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromString(src); err != nil {
		t.Fatal(err)
	}
	return doc.Root()
}

// testReq is a self-contained tns:req.
func testReq(t testing.TB, id, n, text string) *etree.Element {
	return parseElement(t, `<tns:req xmlns:tns="`+nsTest+`"><tns:id>`+id+`</tns:id><tns:n>`+n+`</tns:n><tns:text>`+text+`</tns:text></tns:req>`)
}

// poMessageOf is a one-part message holding payload.
func poMessageOf(payload *etree.Element) *exchange.Message {
	m := exchange.NewMessage(exchange.QName{Space: nsTest, Local: "req"})
	m.Parts["payload"] = payload
	return m
}

// answered is what the client of a run begun by a request saw.
type answered struct {
	out   Outcome
	reply *exchange.Message
	fault *exchange.Fault
	n     int // answers
}

// begin runs a new instance of p on a request to operation op of its
// first endpoint with payload as its "payload" part.
func begin(t testing.TB, p *Version, op string, payload *etree.Element) answered {
	t.Helper()
	ep := p.Endpoints[0]
	var o *exchange.Operation
	for _, c := range ep.Operations {
		if c.Name == op {
			o = c
		}
	}
	if o == nil {
		t.Fatalf("process %s serves no %s", p.Name.Local, op)
	}
	req := exchange.NewMessage(o.Input.Name)
	req.Parts["payload"] = payload
	var a answered
	ex := &exchange.Exchange{Endpoint: ep, Operation: o, Input: req, Respond: func(m *exchange.Message, f *exchange.Fault) {
		a.n++
		a.reply, a.fault = m, f
	}}
	a.out = NewInstance(testHost{}, p, context.Background()).Begin(Delivery{Ex: ex})
	return a
}
