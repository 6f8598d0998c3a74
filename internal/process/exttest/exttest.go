package exttest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// Extension is the test extension: every element is both an activity and
// an assign operation.
//
//	<x:upper from="v" to="w"/>      w := upper-case(string value of v); v uninitialized throws {NS}empty
//	<x:set var="v">text</x:set>     v := <v>text</v>
//	<x:setmsg var="m" part="p"/>    m's part p (default payload) := <t:resp><t:a>from a message</t:a></t:resp>, t being RespNS
//	<x:read from="m" to="w"/>       w := the string of m's Read form, its element names first ("message/payload:...")
//	<x:fail local="n"/>             throws {NS}n
//	<x:broken/>                     fails with a plain error
//	<x:check><x:arg var="v"/></x:check>  reports an unknown v at <x:arg>'s line (compile time)
type Extension struct {
	NS     string // the extension's namespace: its elements' and its faults'
	RespNS string // the namespace of the element setmsg writes
}

// Extensions registers x for both kinds under its namespace.
func (x Extension) Extensions() compile.Extensions {
	return compile.Extensions{x.NS: {Activities: x, AssignOperations: x}}
}

// CompileActivity implements compile.ExtensionActivityCompiler.
func (x Extension) CompileActivity(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return x.compile(el, c)
}

// CompileAssignOperation implements compile.ExtensionAssignCompiler.
func (x Extension) CompileAssignOperation(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return x.compile(el, c)
}

func (x Extension) compile(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	vr := func(attr string) (plan.ExtensionVariable, error) {
		name := el.SelectAttrValue(attr, "")
		if name == "" {
			return plan.ExtensionVariable{}, fmt.Errorf("<%s> needs a %s attribute", el.Tag, attr)
		}
		v, err := c.Variable(name)
		if err != nil {
			return plan.ExtensionVariable{}, fmt.Errorf("%s: %w", attr, err)
		}
		return v, nil
	}
	two := func(read bool) (plan.ExtensionAction, error) {
		from, err := vr("from")
		if err != nil {
			return nil, err
		}
		to, err := vr("to")
		if err != nil {
			return nil, err
		}
		return transform{ns: x.NS, from: from, to: to, read: read}, nil
	}
	switch el.Tag {
	case "upper":
		return two(false)
	case "read":
		return two(true)
	case "set":
		v, err := vr("var")
		if err != nil {
			return nil, err
		}
		return set{v: v, text: el.Text()}, nil
	case "setmsg":
		v, err := vr("var")
		if err != nil {
			return nil, err
		}
		return setMsg{v: v, part: el.SelectAttrValue("part", "payload"), ns: x.RespNS}, nil
	case "fail":
		return fail{ns: x.NS, local: el.SelectAttrValue("local", "")}, nil
	case "broken":
		return broken{}, nil
	case "check":
		for _, a := range el.ChildElements() {
			if _, err := c.Variable(a.SelectAttrValue("var", "")); err != nil {
				c.ErrorAt(a, "%v", err)
			}
		}
		return broken{}, nil
	}
	return nil, fmt.Errorf("%w: <%s>", compile.ErrUnknownExtensionElement, el.Tag)
}

// transform is upper (read false) or read (read true).
type transform struct {
	ns       string
	from, to plan.ExtensionVariable
	read     bool
}

func (a transform) Run(_ context.Context, vars plan.ExtensionVariables) error {
	v := vars.Read(a.from)
	if v == nil {
		return &plan.ExtensionFault{Space: a.ns, Local: "empty", Reason: a.from.Name() + " is not initialized"}
	}
	out := etree.NewElement("v")
	if a.read {
		var names []string
		for _, c := range v.ChildElements() {
			names = append(names, c.Tag)
		}
		out.SetText(v.Tag + "/" + strings.Join(names, ",") + ":" + expr.StringValue(v))
	} else {
		out.SetText(strings.ToUpper(expr.StringValue(v)))
	}
	return vars.Write(a.to, out)
}

type set struct {
	v    plan.ExtensionVariable
	text string
}

func (a set) Run(_ context.Context, vars plan.ExtensionVariables) error {
	e := etree.NewElement("v")
	e.SetText(a.text)
	return vars.Write(a.v, e)
}

type setMsg struct {
	v        plan.ExtensionVariable
	part, ns string
}

func (a setMsg) Run(_ context.Context, vars plan.ExtensionVariables) error {
	m := etree.NewElement("message")
	r := m.CreateElement(a.part).CreateElement("t:resp")
	r.CreateAttr("xmlns:t", a.ns)
	r.CreateElement("t:a").SetText("from a message")
	return vars.Write(a.v, m)
}

type fail struct{ ns, local string }

func (a fail) Run(context.Context, plan.ExtensionVariables) error {
	return &plan.ExtensionFault{Space: a.ns, Local: a.local, Reason: "asked to"}
}

type broken struct{}

func (broken) Run(context.Context, plan.ExtensionVariables) error {
	return errors.New("out of order")
}
