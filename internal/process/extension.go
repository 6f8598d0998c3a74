package process

import (
	"errors"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
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
	CompileActivity(el *etree.Element, c ExtensionCompiler) (plan.ExtensionAction, error)
}

// ExtensionAssignCompiler compiles extension assign operations.
type ExtensionAssignCompiler interface {
	// CompileAssignOperation checks el (the child of
	// <extensionAssignOperation>) and returns what runs it. An error
	// refuses the bundle; it is reported with the element's file and line.
	CompileAssignOperation(el *etree.Element, c ExtensionCompiler) (plan.ExtensionAction, error)
}

// ExtensionCompiler is what an extension sees at compile time.
type ExtensionCompiler interface {
	// Variable resolves the variable name visible where the extension
	// element is (enclosing scopes first). An unknown name is an error.
	Variable(name string) (plan.ExtensionVariable, error)
	// ErrorAt reports a problem with el, an element inside the extension
	// element, with el's own line; the bundle is refused.
	ErrorAt(el *etree.Element, format string, args ...any)
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

func (x *extCompiler) Variable(name string) (plan.ExtensionVariable, error) {
	v := x.c.LookupVar(name)
	if v == nil {
		return plan.ExtensionVariable{}, fmt.Errorf("unknown variable %q", name)
	}
	x.c.extResolved = appendVarOnce(x.c.extResolved, v)
	return plan.ExtensionVariable{V: v}, nil
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

func appendVarOnce(list []*expr.Var, v *expr.Var) []*expr.Var {
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

func stepExtActivity(a *plan.ExtActivity, in *instance, _ *frame) (plan.Activity, bool, error) {
	if err := in.runExtension(a.Act, a.Pos); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// runExtension runs act for in, turning its error into a fault at pos.
func (in *instance) runExtension(act plan.ExtensionAction, at bpel.Pos) error {
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
	var xf *plan.ExtensionFault
	if errors.As(err, &xf) {
		return &faultValue{name: exchange.QName{Space: xf.Space, Local: xf.Local}, reason: xf.Reason, at: at}
	}
	return in.faultf(at, "subLanguageExecutionFault", "extension: %v", err)
}

// extVars implements ExtensionVariables over an instance.
type extVars struct {
	in *instance
	at bpel.Pos
}

func (x *extVars) Read(ev plan.ExtensionVariable) *etree.Element {
	in, v := x.in, ev.V
	if v.Msg != nil {
		m := etree.NewElement("message")
		s := in.slot(v)
		some := false
		for i, pd := range v.Msg.Parts {
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
			if c := expr.FirstElement(w); c != nil {
				part := m.CreateElement(pd.Name)
				cp := c.Copy()
				expr.FixNamespaces(cp, c, nil)
				part.AddChild(cp)
				some = true
			}
		}
		if !some {
			return nil
		}
		return m
	}
	base := expr.BaseNode(in.root, v, -1)
	if base == nil {
		return nil
	}
	cp := base.Copy()
	expr.FixNamespaces(cp, base, nil)
	if v.Elem.IsZero() {
		if len(cp.Child) == 0 && len(cp.Attr) == 0 {
			return nil
		}
		cp.Space, cp.Tag = "", v.Name
	}
	return cp
}

func (x *extVars) Write(ev plan.ExtensionVariable, value *etree.Element) error {
	in, v := x.in, ev.V
	if value == nil {
		return in.faultf(x.at, "selectionFailure", "extension wrote nothing to variable %s", v.Name)
	}
	if v.Msg != nil {
		m := copyMessage(in.message(v))
		for _, pe := range value.ChildElements() {
			i := partIndex(v.Msg, pe.Tag)
			if i < 0 {
				return in.faultf(x.at, "mismatchedAssignmentFailure", "extension wrote part %s, which message %s of variable %s lacks", pe.Tag, v.Msg.Name.Local, v.Name)
			}
			pd := v.Msg.Parts[i]
			if pd.Element.IsZero() {
				cp := pe.Copy()
				expr.FixNamespaces(cp, pe, nil)
				m.Parts[pd.Name] = cp
				continue
			}
			c := expr.FirstElement(pe)
			if c == nil {
				return in.faultf(x.at, "mismatchedAssignmentFailure", "extension wrote part %s of variable %s without its element", pe.Tag, v.Name)
			}
			cp := c.Copy()
			expr.FixNamespaces(cp, c, nil)
			m.Parts[pd.Name] = cp
		}
		in.storeMessage(v, m)
		return nil
	}
	op := &plan.CopyOp{Pos: x.at, To: plan.ToSpec{V: v, Part: -1}}
	dst, err := evalToCopyOp(op, in)
	if err != nil {
		return err
	}
	in.touch(v)
	return replaceCopyOp(op, in, source{node: expr.Node{Tok: value, Attr: -1}}, dst)
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

// The extension API's run-time interfaces are plan types (a compiled
// extension activity holds its action); these names keep them where
// extension authors find the rest of the API.
type (
	// ExtensionAction is plan.ExtensionAction.
	ExtensionAction = plan.ExtensionAction
	// ExtensionVariables is plan.ExtensionVariables.
	ExtensionVariables = plan.ExtensionVariables
	// ExtensionVariable is plan.ExtensionVariable.
	ExtensionVariable = plan.ExtensionVariable
	// ExtensionFault is plan.ExtensionFault.
	ExtensionFault = plan.ExtensionFault
)
