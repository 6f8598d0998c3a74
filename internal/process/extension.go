package process

import (
	"context"
	"errors"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
)

// Extension bundles: Go code that implements the extension activities
// and extension assign operations of one namespace, as ODE's extension
// bundles (Java plugins) did. An embedding program registers them in
// LoadOptions.Extensions (the compiler) and Options.Extensions (the
// engine); a process that declares the namespace mustUnderstand="yes"
// deploys only when it is registered.
//
// The compiler hands an implementation the extension element and an
// ExtensionCompiler, through which it resolves the variables it uses
// (compile-time checks, reported as "file.bpel:LINE: <element>: ...").
// At run time, its ExtensionAction runs in the instance's goroutine and
// sees the variables only through ExtensionVariables.

// Extensions maps an extension namespace URI to its implementation.
type Extensions map[string]Extension

// Extension implements one extension namespace: its extension activities,
// its extension assign operations, or both. A nil field means the
// namespace has none of that kind; using one is refused at deploy.
type Extension struct {
	// Activities compiles the namespace's elements found in an
	// <extensionActivity>.
	Activities ExtensionActivityCompiler
	// AssignOperations compiles the namespace's elements found in an
	// <extensionAssignOperation> of an <assign>.
	AssignOperations ExtensionAssignCompiler
}

// ExtensionActivityCompiler compiles extension activities.
type ExtensionActivityCompiler interface {
	// CompileActivity checks el (the child of <extensionActivity>) and
	// returns what runs it. An error refuses the bundle; it is reported
	// with the element's file and line.
	CompileActivity(el *etree.Element, c ExtensionCompiler) (ExtensionAction, error)
}

// ExtensionAssignCompiler compiles extension assign operations.
type ExtensionAssignCompiler interface {
	// CompileAssignOperation checks el (the child of
	// <extensionAssignOperation>) and returns what runs it. An error
	// refuses the bundle; it is reported with the element's file and line.
	CompileAssignOperation(el *etree.Element, c ExtensionCompiler) (ExtensionAction, error)
}

// ExtensionCompiler is what an extension sees at compile time.
type ExtensionCompiler interface {
	// Variable resolves the variable name visible where the extension
	// element is (enclosing scopes first). An unknown name is an error.
	Variable(name string) (ExtensionVariable, error)
	// ErrorAt reports a problem with el, an element inside the extension
	// element, with el's own line; the bundle is refused.
	ErrorAt(el *etree.Element, format string, args ...any)
}

// ExtensionVariable is a variable resolved at compile time.
type ExtensionVariable struct {
	v *variable
}

// Name is the variable's name.
func (x ExtensionVariable) Name() string { return x.v.name }

// ExtensionAction runs one compiled extension activity or assign
// operation. The same action serves every instance of the process (and
// concurrent ones): it must keep no per-instance state of its own.
type ExtensionAction interface {
	// Run executes the element for one instance. vars is valid only
	// during the call. An *ExtensionFault error throws that fault; any
	// other error throws bpel:subLanguageExecutionFault naming it.
	Run(ctx context.Context, vars ExtensionVariables) error
}

// ExtensionVariables reads and writes an instance's variables.
type ExtensionVariables interface {
	// Read returns a copy of the variable's value, or nil when it is not
	// initialized: an element variable's element; a type variable's value
	// as an element named after the variable (a simple type: its text);
	// a message variable as <message> holding one element per part,
	// named after the part, as ODE's bundles saw it.
	Read(v ExtensionVariable) *etree.Element
	// Write gives the variable value, with the semantics of a <copy> of
	// value to the whole variable (WS-BPEL 2.0 section 8.4.2): an element
	// variable takes a copy of value renamed to its declared element, a
	// type variable takes value's content, and a message variable takes
	// one part per child element of value, matched by name. An error is
	// a fault to return from Run.
	Write(v ExtensionVariable, value *etree.Element) error
}

// ExtensionFault is an error an ExtensionAction returns to throw a
// named fault.
type ExtensionFault struct {
	Space, Local string
	// Reason says what happened, for logs and the SOAP fault string.
	Reason string
}

func (f *ExtensionFault) Error() string {
	return fmt.Sprintf("fault {%s}%s: %s", f.Space, f.Local, f.Reason)
}

// ErrUnknownExtensionElement is what a compile method returns (wrapped)
// for an element its namespace does not define. As in ODE, such an
// element is skipped (an activity acts as <empty>) when the process
// declares the namespace mustUnderstand="no", and refuses the bundle
// otherwise.
var ErrUnknownExtensionElement = errors.New("unknown extension element")

// LoadOptions configures how bundles are compiled.
type LoadOptions struct {
	// Extensions are the extension namespaces the compiler implements,
	// besides ODE's bpel4restlight activities.
	Extensions Extensions
	// SharedFolders are folders beside the bundle's own whose files its
	// imports may name ("../ProbeService/x.wsdl", as ODE's test bundles
	// share one); nil, orchd serve's, confines a bundle to its folder.
	SharedFolders []string
}

// extCompiler implements ExtensionCompiler for one extension element.
type extCompiler struct {
	c   *compiler
	el  *etree.Element
	bad bool
}

func (x *extCompiler) Variable(name string) (ExtensionVariable, error) {
	v := x.c.lookupVar(name)
	if v == nil {
		return ExtensionVariable{}, fmt.Errorf("unknown variable %q", name)
	}
	x.c.extResolved = appendVarOnce(x.c.extResolved, v)
	return ExtensionVariable{v: v}, nil
}

func (x *extCompiler) ErrorAt(el *etree.Element, format string, args ...any) {
	x.bad = true
	x.c.errorf(el, format, args...)
}

// extensionElement finds the one element inside wrapper (an
// <extensionActivity> or <extensionAssignOperation>), skipping BPEL's
// own (documentation, targets, sources).
func extensionElement(wrapper *etree.Element) *etree.Element {
	for _, x := range wrapper.ChildElements() {
		if !isBPEL(x) {
			return x
		}
	}
	return nil
}

// compileExtension compiles el with the registered implementation of its
// namespace; kind is "activity" or "assign operation". ok is false, with
// the problem reported, when nothing runs it; a nil action with ok true
// means no implementation is registered, or it does not know el and the
// namespace is optional: el may be skipped.
func (c *compiler) compileExtension(el *etree.Element, kind string) (act ExtensionAction, ok bool) {
	ns := el.NamespaceURI()
	impl, registered := c.ext[ns]
	if !registered {
		return nil, true
	}
	x := &extCompiler{c: c, el: el}
	c.extResolved = nil
	var err error
	switch {
	case kind == "activity" && impl.Activities != nil:
		act, err = impl.Activities.CompileActivity(el, x)
	case kind == "assign operation" && impl.AssignOperations != nil:
		act, err = impl.AssignOperations.CompileAssignOperation(el, x)
	default:
		c.errorf(el, "extension %s has no %ss", ns, kind)
		return nil, false
	}
	if err != nil {
		if declared, must := c.extensionKnown(ns); errors.Is(err, ErrUnknownExtensionElement) && declared && !must {
			return nil, true
		}
		c.errorf(el, "%w", err)
		return nil, false
	}
	if x.bad {
		return nil, false
	}
	if act == nil {
		c.errorf(el, "extension %s compiled %s <%s> to nothing", ns, kind, el.Tag)
		return nil, false
	}
	c.p.extensions = appendOnce(c.p.extensions, ns)
	return act, true
}

func appendVarOnce(list []*variable, v *variable) []*variable {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// extActivity runs a registered extension activity.
type extActivity struct {
	base
	act ExtensionAction
}

func (a *extActivity) step(in *instance, _ *frame) (activity, bool, error) {
	if err := in.runExtension(a.act, a.pos); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// runExtension runs act for in, turning its error into a fault at pos.
func (in *instance) runExtension(act ExtensionAction, at bpel.Pos) error {
	vars := &extVars{in: in, at: at}
	err := act.Run(in.ctx, vars)
	vars.in = nil // the action must not keep it
	if err == nil {
		return nil
	}
	var fv *faultValue
	if errors.As(err, &fv) {
		return fv
	}
	var xf *ExtensionFault
	if errors.As(err, &xf) {
		return &faultValue{name: qname{Space: xf.Space, Local: xf.Local}, reason: xf.Reason, at: at}
	}
	return in.faultf(at, "subLanguageExecutionFault", "extension: %v", err)
}

// extVars implements ExtensionVariables over an instance.
type extVars struct {
	in *instance
	at bpel.Pos
}

func (x *extVars) Read(ev ExtensionVariable) *etree.Element {
	in, v := x.in, ev.v
	if v.msg != nil {
		m := etree.NewElement("message")
		s := in.slot(v)
		some := false
		for i, pd := range v.msg.Parts {
			w := s.Child[i].(*etree.Element)
			if pd.Element.IsZero() {
				if len(w.Child) == 0 && len(w.Attr) == 0 {
					continue
				}
				cp := w.Copy()
				cp.Space, cp.Tag = "", pd.Name
				m.AddChild(cp)
				some = true
				continue
			}
			if c := firstElement(w); c != nil {
				part := m.CreateElement(pd.Name)
				cp := c.Copy()
				fixNamespaces(cp, c, nil)
				part.AddChild(cp)
				some = true
			}
		}
		if !some {
			return nil
		}
		return m
	}
	base := baseNode(in.root, v, -1)
	if base == nil {
		return nil
	}
	cp := base.Copy()
	fixNamespaces(cp, base, nil)
	if v.elem.IsZero() {
		if len(cp.Child) == 0 && len(cp.Attr) == 0 {
			return nil
		}
		cp.Space, cp.Tag = "", v.name
	}
	return cp
}

func (x *extVars) Write(ev ExtensionVariable, value *etree.Element) error {
	in, v := x.in, ev.v
	if value == nil {
		return in.faultf(x.at, "selectionFailure", "extension wrote nothing to variable %s", v.name)
	}
	if v.msg != nil {
		m := copyMessage(in.message(v))
		for _, pe := range value.ChildElements() {
			i := partIndex(v.msg, pe.Tag)
			if i < 0 {
				return in.faultf(x.at, "mismatchedAssignmentFailure", "extension wrote part %s, which message %s of variable %s lacks", pe.Tag, v.msg.Name.Local, v.name)
			}
			pd := v.msg.Parts[i]
			if pd.Element.IsZero() {
				cp := pe.Copy()
				fixNamespaces(cp, pe, nil)
				m.Parts[pd.Name] = cp
				continue
			}
			c := firstElement(pe)
			if c == nil {
				return in.faultf(x.at, "mismatchedAssignmentFailure", "extension wrote part %s of variable %s without its element", pe.Tag, v.name)
			}
			cp := c.Copy()
			fixNamespaces(cp, c, nil)
			m.Parts[pd.Name] = cp
		}
		in.storeMessage(v, m)
		return nil
	}
	op := &copyOp{pos: x.at, to: toSpec{v: v, part: -1}}
	dst, err := op.evalTo(in)
	if err != nil {
		return err
	}
	in.touch(v)
	return op.replace(in, source{node: node{tok: value, attr: -1}}, dst)
}

// partIndex is the index of the part name of m, or -1.
func partIndex(m *exchange.MessageDesc, name string) int {
	for i, pd := range m.Parts {
		if pd.Name == name {
			return i
		}
	}
	return -1
}
