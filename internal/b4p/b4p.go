package b4p

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xmlparse"
)

// NS is BPEL4People 1.1's namespace.
const NS = "http://docs.oasis-open.org/ns/bpel4people/bpel4people/200803"

// Options configure People. Tasks and Dispatcher are needed before a
// people activity runs: orchd serve builds the extension before the
// compiler options that hold it, and gives both with Bind once the
// engines exist.
type Options struct {
	// Tasks is the task engine people activities create their tasks in.
	Tasks *humantask.Engine
	// Dispatcher is the process engine: a task's end continues its
	// instance through it.
	Dispatcher exchange.Dispatcher
	// Logger receives what could not be done; nil discards.
	Logger *slog.Logger
}

// People is the BPEL4People extension: the compiler of people
// activities (Extensions) and the continuation of their instances when
// their tasks end (Ended), on one task engine.
type People struct {
	bound atomic.Pointer[engines]
	log   *slog.Logger
}

// engines are what Bind gives, replaced whole (a task end being
// delivered reads them while a test, or a restart, binds new ones).
type engines struct {
	tasks *humantask.Engine
	disp  exchange.Dispatcher
}

// New returns the extension.
func New(o Options) *People {
	p := &People{log: o.Logger}
	p.Bind(o.Tasks, o.Dispatcher)
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// Bind gives the task engine and the process engine, before any people
// activity runs.
func (p *People) Bind(tasks *humantask.Engine, d exchange.Dispatcher) {
	p.bound.Store(&engines{tasks: tasks, disp: d})
}

// tasks is the task engine bound.
func (p *People) tasks() *humantask.Engine { return p.bound.Load().tasks }

// Extensions registers the people activity under NS, for
// compile.LoadOptions.Extensions.
func (p *People) Extensions() compile.Extensions { return p.With(nil) }

// With is exts (not changed) with the people activity under NS in
// place of any other.
func (p *People) With(exts compile.Extensions) compile.Extensions {
	out := compile.Extensions{}
	for ns, x := range exts {
		out[ns] = x
	}
	out[NS] = compile.Extension{Activities: p}
	return out
}

// CompileActivity implements compile.ExtensionActivityCompiler.
func (p *People) CompileActivity(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	if el.Tag != "peopleActivity" {
		return nil, fmt.Errorf("%w: <%s> (BPEL4People has peopleActivity only)", compile.ErrUnknownExtensionElement, el.Tag)
	}
	a := &activity{p: p, name: el.SelectAttrValue("name", "")}
	var err error
	if a.in, err = variable(el, c, "inputVariable"); err != nil {
		return nil, err
	}
	if a.out, err = variable(el, c, "outputVariable"); err != nil {
		return nil, err
	}
	switch s := strings.TrimSpace(el.SelectAttrValue("isSkipable", "")); s {
	case "":
	case "yes", "true":
		a.skipable = new(bool)
		*a.skipable = true
	case "no", "false":
		a.skipable = new(bool)
	default:
		c.ErrorAt(el, "isSkipable must be yes or no, not %q", s)
	}
	n := 0
	for _, k := range el.ChildElements() {
		switch {
		case k.NamespaceURI() == humantask.NS && k.Tag == "task":
			a.def, err = inlineTask(k)
			if err != nil {
				c.ErrorAt(k, "%v", err)
			}
			n++
		case k.NamespaceURI() == NS && k.Tag == "localTask":
			ref := strings.TrimSpace(k.SelectAttrValue("reference", ""))
			prefix, local, ok := strings.Cut(ref, ":")
			if !ok {
				prefix, local = "", ref
			}
			space := k.NamespaceURI()
			if ns := namespaceOf(k, prefix); ns != "" || prefix == "" {
				space = ns
			} else {
				c.ErrorAt(k, "reference %q: prefix %s is not declared", ref, prefix)
			}
			if local == "" {
				c.ErrorAt(k, "<b4p:localTask> needs a reference (inline tasks are <htd:task>)")
			}
			a.ref = xml.Name{Space: space, Local: local}
			n++
		case k.NamespaceURI() == NS && (k.Tag == "remoteTask" || k.Tag == "localNotification" || k.Tag == "remoteNotification"),
			k.NamespaceURI() == humantask.NS && k.Tag == "notification":
			c.ErrorAt(k, "<%s> is not supported yet (a people activity runs a local task: <htd:task> or <b4p:localTask reference>)", k.Tag)
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("a peopleActivity needs exactly one task (<htd:task> or <b4p:localTask reference>); it has %d", n)
	}
	return a, nil
}

// variable resolves the variable the attribute names, if any.
func variable(el *etree.Element, c compile.ExtensionCompiler, attr string) (*plan.ExtensionVariable, error) {
	name := el.SelectAttrValue(attr, "")
	if name == "" {
		return nil, nil
	}
	v, err := c.Variable(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", attr, err)
	}
	return &v, nil
}

// namespaceOf is the namespace prefix is bound to where e is ("" for
// the default namespace when prefix is "").
func namespaceOf(e *etree.Element, prefix string) string {
	for x := e; x != nil; x = x.Parent() {
		for _, a := range x.Attr {
			if (prefix == "" && a.Space == "" && a.Key == "xmlns") || (a.Space == "xmlns" && a.Key == prefix) {
				return a.Value
			}
		}
	}
	return ""
}

// inlineTask parses an <htd:task> written in the process, with the
// process's target namespace as its own and the namespaces in scope
// where it is.
func inlineTask(t *etree.Element) (*humantask.TaskDef, error) {
	doc := xmlparse.NewDocument()
	hi := doc.CreateElement("htd:humanInteractions")
	hi.CreateAttr("xmlns:htd", humantask.NS)
	tns := ""
	for x := t; x != nil; x = x.Parent() {
		if x.Parent() == nil || x.Parent().Parent() == nil {
			tns = x.SelectAttrValue("targetNamespace", tns)
		}
	}
	hi.CreateAttr("targetNamespace", tns)
	seen := map[string]bool{"htd": true}
	for x := t.Parent(); x != nil; x = x.Parent() {
		for _, a := range x.Attr {
			if a.Space == "xmlns" && !seen[a.Key] {
				seen[a.Key] = true
				hi.CreateAttr("xmlns:"+a.Key, a.Value)
			}
		}
	}
	hi.CreateElement("htd:tasks").AddChild(t.Copy())
	data, err := doc.WriteToBytes()
	if err != nil {
		return nil, err
	}
	defs := &humantask.Definitions{}
	if err := humantask.ParseHT("inline task", data, defs); err != nil {
		return nil, err
	}
	for _, d := range defs.Tasks {
		return d, nil
	}
	return nil, errors.New("the inline task defines nothing")
}

// activity is one compiled people activity: a plan.ExtensionWaiter.
type activity struct {
	p        *People
	name     string
	in, out  *plan.ExtensionVariable
	skipable *bool
	def      *humantask.TaskDef // inline
	ref      xml.Name           // or a task of a deployed .ht file
}

// Run implements plan.ExtensionAction: never called for a waiter.
func (a *activity) Run(context.Context, plan.ExtensionVariables) error {
	return errors.New("a people activity waits; it runs through Start and Finish")
}

// definition is the task's definition.
func (a *activity) definition() (*humantask.TaskDef, error) {
	if a.def != nil {
		return a.def, nil
	}
	if d, ok := a.p.tasks().Definition(a.ref); ok {
		return d, nil
	}
	return nil, fmt.Errorf("task {%s}%s is not defined in any deployed .ht file", a.ref.Space, a.ref.Local)
}

// Start implements plan.ExtensionWaiter: it creates the task.
func (a *activity) Start(ctx context.Context, vars plan.ExtensionVariables, w plan.WaitStart) (string, error) {
	d, err := a.definition()
	if err != nil {
		return "", &plan.ExtensionFault{Space: NS, Local: "nonRecoverableError", Reason: err.Error()}
	}
	input := ""
	if a.in != nil {
		if el := payload(vars.Read(*a.in), a.in); el != nil {
			doc := xmlparse.NewDocument()
			doc.SetRoot(el)
			if input, err = doc.WriteToString(); err != nil {
				return "", err
			}
		}
	}
	t, err := a.p.tasks().Create(ctx, humantask.CreateRequest{Def: d, Input: input, Process: w.Process.String(), Instance: w.Instance, Skipable: a.skipable})
	if err != nil {
		return "", &plan.ExtensionFault{Space: NS, Local: "nonRecoverableError", Reason: err.Error()}
	}
	return t.ID, nil
}

// payload is the element a task works on: a message variable's first
// part's element (or the part itself, for a type part), an element
// variable's element.
func payload(v *etree.Element, ev *plan.ExtensionVariable) *etree.Element {
	if v == nil {
		return nil
	}
	if ev.V.Msg == nil {
		return v
	}
	part := v.SelectElement(ev.V.Msg.Parts[0].Name)
	if part == nil {
		return nil
	}
	if ev.V.Msg.Parts[0].Element.IsZero() {
		return part
	}
	if els := part.ChildElements(); len(els) > 0 {
		return els[0]
	}
	return nil
}

// The parts of the message a task's end sends its instance, besides the
// key (the task id).
const (
	partState  = "state"
	partOutput = "output"
	partFault  = "fault"
)

// Finish implements plan.ExtensionWaiter: it takes the task's end.
func (a *activity) Finish(_ context.Context, vars plan.ExtensionVariables, m *exchange.Message) error {
	state := humantask.State(strings.TrimSpace(textOf(m.Part(partState))))
	switch state {
	case humantask.Completed:
		if a.out == nil {
			return nil
		}
		out := m.Part(partOutput)
		var el *etree.Element
		if out != nil {
			if els := out.ChildElements(); len(els) > 0 {
				el = els[0]
			}
		}
		if el == nil {
			return &plan.ExtensionFault{Space: NS, Local: "nonRecoverableError", Reason: "the task completed without output"}
		}
		return vars.Write(*a.out, wrap(el, a.out))
	case humantask.Obsolete: // skipped (BPEL4People 4.7: the activity completes)
		return nil
	case humantask.Failed:
		name := ""
		if f := m.Part(partFault); f != nil {
			name = strings.TrimSpace(f.SelectAttrValue("name", ""))
		}
		space := ""
		if d, err := a.definition(); err == nil {
			space = d.Interface.PortType.Space
		}
		return &plan.ExtensionFault{Space: space, Local: name, Reason: "the task failed with fault " + name}
	}
	return &plan.ExtensionFault{Space: NS, Local: "nonRecoverableError", Reason: fmt.Sprintf("the task ended %s", state)}
}

// wrap gives el the shape vars.Write takes for the variable: a message
// variable's first part holding it.
func wrap(el *etree.Element, ev *plan.ExtensionVariable) *etree.Element {
	if ev.V.Msg == nil {
		return el
	}
	m := etree.NewElement("message")
	pd := ev.V.Msg.Parts[0]
	if pd.Element.IsZero() {
		cp := el.Copy()
		cp.Space, cp.Tag = "", pd.Name
		m.AddChild(cp)
		return m
	}
	m.CreateElement(pd.Name).AddChild(el.Copy())
	return m
}

func textOf(e *etree.Element) string {
	if e == nil {
		return ""
	}
	return e.Text()
}

// Ended is the task engine's Options.Ended: it sends the end of a task a
// people activity created to the instance waiting for it. An error (the
// process engine refused it) is retried by the task engine, which keeps
// the end pending in the task until this returns nil.
func (p *People) Ended(t humantask.Task) error {
	proc, ok := parseClark(t.Process)
	if !ok {
		return nil // not a process's: nothing waits
	}
	m := exchange.NewMessage(exchange.QName{Space: plan.ExtWaitNS, Local: "done"})
	m.Parts[plan.ExtWaitKeyPart] = textElement(plan.ExtWaitKeyPart, t.ID)
	m.Parts[partState] = textElement(partState, string(t.State))
	if el, err := humantask.ParseXML(t.Output); err == nil && el != nil {
		out := etree.NewElement(partOutput)
		out.AddChild(el)
		m.Parts[partOutput] = out
	}
	if t.Fault != nil {
		f := etree.NewElement(partFault)
		f.CreateAttr("name", t.Fault.Name)
		m.Parts[partFault] = f
	}
	if err := p.deliver(plan.ExtWaitPath(proc), m); err != nil {
		return fmt.Errorf("task %s to instance %s of %s: %w", t.ID, t.Instance, t.Process, err)
	}
	return nil
}

// deliver dispatches m (copied: a run keeps what it takes) to the
// callback endpoint at path.
func (p *People) deliver(path string, m *exchange.Message) error {
	disp := p.bound.Load().disp
	if disp == nil {
		return errors.New("no process engine")
	}
	cp := exchange.NewMessage(m.Name)
	for k, v := range m.Parts {
		cp.Parts[k] = v.Copy()
	}
	op := &exchange.Operation{Name: plan.ExtWaitOperation, Input: &exchange.MessageDesc{Name: m.Name, Parts: []exchange.PartDesc{{Name: plan.ExtWaitKeyPart}}}}
	ex := &exchange.Exchange{Endpoint: &exchange.Endpoint{Path: path}, Operation: op, Input: cp, Received: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return disp.Dispatch(ctx, ex)
}

func textElement(tag, text string) *etree.Element {
	e := etree.NewElement(tag)
	e.SetText(text)
	return e
}

// parseClark reads "{ns}local".
func parseClark(s string) (exchange.QName, bool) {
	if !strings.HasPrefix(s, "{") {
		return exchange.QName{Local: s}, s != ""
	}
	ns, local, ok := strings.Cut(s[1:], "}")
	return exchange.QName{Space: ns, Local: local}, ok && local != ""
}

// ExtensionWaitsEnded is process.Options.ExtensionWaitsEnded: an
// instance ended while its people activities waited (completed by
// another branch, faulted, exited or terminated), and their tasks are
// exited (in the background: the caller is the instance's run).
func (p *People) ExtensionWaitsEnded(process string, keys []string) {
	go func() {
		for _, id := range keys {
			if _, err := p.tasks().Exit(context.Background(), id); err != nil {
				p.log.Warn("task of an ended instance not exited", slog.String("process", process), slog.String("task", id), slog.Any("err", err))
			}
		}
	}()
}
