package odemock

import (
	"context"
	"fmt"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/plan"
)

// TestExtensionNS is the namespace of ODE's test extension bundle, which
// the corpus's TestExtension* processes use.
const TestExtensionNS = "urn:ode:test-extension-bundle"

// TestExtension is ODE's test extension bundle (TestExtensionBundle in
// ODE's bpel-test), as an orchd extension: operation doIt just completes;
// doAssign writes <message><TestPart>Small</TestPart></message> to the
// variable tmpVar. As in ODE, one registry of operations serves both
// <extensionActivity> and <extensionAssignOperation>.
func TestExtension() compile.Extension {
	b := testBundle{}
	return compile.Extension{Activities: b, AssignOperations: b}
}

type testBundle struct{}

// CompileActivity implements compile.ExtensionActivityCompiler.
func (testBundle) CompileActivity(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return compileTestOp(el, c)
}

// CompileAssignOperation implements compile.ExtensionAssignCompiler.
func (testBundle) CompileAssignOperation(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return compileTestOp(el, c)
}

func compileTestOp(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	switch el.Tag {
	case "doIt":
		return doIt{}, nil
	case "doAssign":
		v, err := c.Variable("tmpVar")
		if err != nil {
			return nil, fmt.Errorf("doAssign writes variable tmpVar: %w", err)
		}
		return doAssign{tmp: v}, nil
	}
	return nil, fmt.Errorf("%w: <%s> of %s (doIt, doAssign)", compile.ErrUnknownExtensionElement, el.Tag, TestExtensionNS)
}

type doIt struct{}

func (doIt) Run(context.Context, plan.ExtensionVariables) error { return nil }

type doAssign struct{ tmp plan.ExtensionVariable }

func (a doAssign) Run(_ context.Context, vars plan.ExtensionVariables) error {
	msg := etree.NewElement("message")
	msg.CreateElement("TestPart").SetText("Small")
	if err := vars.Write(a.tmp, msg); err != nil {
		return fmt.Errorf("doAssign: %w", err)
	}
	return nil
}
