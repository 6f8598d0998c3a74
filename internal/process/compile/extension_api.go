package compile

import (
	"errors"
	"fmt"
	"github.com/orchd/orchd/internal/process/check"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/bundlefs"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/wssec"
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

// Compat is a compatibility mode (check.Compat), a flag.Value for orchd
// serve's --compat; CompatUsage is that flag's usage.
type Compat = check.Compat

// CompatUsage is the --compat flag's usage (serve and lint).
const CompatUsage = check.CompatUsage

// LoadOptions configures how bundles are compiled.
type LoadOptions struct {
	// Extensions are the extension namespaces the compiler implements,
	// besides ODE's bpel4restlight activities.
	Extensions Extensions
	// SharedFolders are folders beside the bundle's own whose files its
	// imports may name ("../ProbeService/x.wsdl", as ODE's test bundles
	// share one); nil, orchd serve's, confines a bundle to its folder.
	SharedFolders []string
	// Waive lists static analysis rules (check.Rules ids, "SA00011")
	// whose findings deploy as warnings instead of refusing the bundle,
	// for every bundle; deploy.xml's orchd:waive does it for one process.
	Waive []string
	// Compat is the compatibility mode of every bundle (orchd serve
	// --compat): check.ODE deploys and runs processes as Apache ODE 1.3
	// did, the rules it did not enforce as warnings; a process's
	// orchd:compat in deploy.xml wins over it.
	Compat check.Compat
	// Replay is where the UsernameToken nonces of the bundles' provided
	// endpoints (orchd:usernameToken) are remembered; nil, each
	// endpoint in its own memory. orchd serve --cluster shares one in
	// etcd between the nodes (cluster.Nonces).
	Replay wssec.ReplayStore
	// AuthChecks bounds the UsernameToken password checks running at
	// once over every bundle (--wssec-max-checks); nil bounds nothing.
	AuthChecks *wssec.Gate
	// Bundle bounds each file of a bundle and the whole bundle
	// (--bundle-file-max, --bundle-max); zero fields take the defaults.
	Bundle bundlefs.Limits
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
	x.c.errorfSrc(el, format, args...)
}

// extensionElement finds the one element inside wrapper (an
// <extensionActivity> or <extensionAssignOperation>), skipping BPEL's
// own (documentation, targets, sources).
func extensionElement(wrapper *ast.Element) *ast.Element {
	for _, x := range wrapper.Children() {
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

// extCompiler implements ExtensionCompiler for one extension element.
type extCompiler struct {
	c   *compiler
	el  *etree.Element
	bad bool
}
