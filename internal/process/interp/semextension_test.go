package interp_test

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

// nsSemExt is the namespace of semExtension, the extension every case's
// bundle is compiled with (extLoadOptions).
const nsSemExt = "urn:sem:ext"

// semExtension is a small extension bundle, each element both an
// activity and an assign operation:
//
//	<x:upper from="v" to="w"/>      w := upper-case(string value of v); v uninitialized throws {urn:sem:ext}empty
//	<x:set var="v">text</x:set>     v := <v>text</v>
//	<x:setmsg var="m" part="p"/>    m := <message><p><tns:resp><tns:a>from a message</tns:a></tns:resp></p></message>
//	<x:read from="m" to="w"/>       w := the string of m's Read form, its element names first ("message/payload:...")
//	<x:fail local="n"/>             throws {urn:sem:ext}n
//	<x:broken/>                     fails with a plain error
type semExtension struct{}

func (semExtension) CompileActivity(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return compileSemExt(el, c)
}

func (semExtension) CompileAssignOperation(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
	return compileSemExt(el, c)
}

func compileSemExt(el *etree.Element, c compile.ExtensionCompiler) (plan.ExtensionAction, error) {
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
	two := func(mk func(a, b plan.ExtensionVariable) plan.ExtensionAction) (plan.ExtensionAction, error) {
		from, err := vr("from")
		if err != nil {
			return nil, err
		}
		to, err := vr("to")
		if err != nil {
			return nil, err
		}
		return mk(from, to), nil
	}
	switch el.Tag {
	case "upper":
		return two(func(a, b plan.ExtensionVariable) plan.ExtensionAction { return semUpper{a, b} })
	case "read":
		return two(func(a, b plan.ExtensionVariable) plan.ExtensionAction { return semRead{a, b} })
	case "set":
		v, err := vr("var")
		if err != nil {
			return nil, err
		}
		return semSet{v: v, text: el.Text()}, nil
	case "setmsg":
		v, err := vr("var")
		if err != nil {
			return nil, err
		}
		return semSetMsg{v: v, part: el.SelectAttrValue("part", "payload")}, nil
	case "fail":
		return semFail(el.SelectAttrValue("local", "")), nil
	case "broken":
		return semBroken{}, nil
	}
	return nil, fmt.Errorf("%w: <%s>", compile.ErrUnknownExtensionElement, el.Tag)
}

type semUpper struct{ from, to plan.ExtensionVariable }

func (a semUpper) Run(_ context.Context, vars plan.ExtensionVariables) error {
	v := vars.Read(a.from)
	if v == nil {
		return &plan.ExtensionFault{Space: nsSemExt, Local: "empty", Reason: a.from.Name() + " is not initialized"}
	}
	out := etree.NewElement("v")
	out.SetText(strings.ToUpper(expr.StringValue(v)))
	return vars.Write(a.to, out)
}

type semRead struct{ from, to plan.ExtensionVariable }

func (a semRead) Run(_ context.Context, vars plan.ExtensionVariables) error {
	v := vars.Read(a.from)
	if v == nil {
		return &plan.ExtensionFault{Space: nsSemExt, Local: "empty", Reason: a.from.Name() + " is not initialized"}
	}
	var names []string
	for _, c := range v.ChildElements() {
		names = append(names, c.Tag)
	}
	out := etree.NewElement("v")
	out.SetText(v.Tag + "/" + strings.Join(names, ",") + ":" + expr.StringValue(v))
	return vars.Write(a.to, out)
}

type semSet struct {
	v    plan.ExtensionVariable
	text string
}

func (a semSet) Run(_ context.Context, vars plan.ExtensionVariables) error {
	e := etree.NewElement("v")
	e.SetText(a.text)
	return vars.Write(a.v, e)
}

type semSetMsg struct {
	v    plan.ExtensionVariable
	part string
}

func (a semSetMsg) Run(_ context.Context, vars plan.ExtensionVariables) error {
	m := etree.NewElement("message")
	r := m.CreateElement(a.part).CreateElement("t:resp")
	r.CreateAttr("xmlns:t", "urn:e2e")
	r.CreateElement("t:a").SetText("from a message")
	return vars.Write(a.v, m)
}

type semFail string

func (a semFail) Run(context.Context, plan.ExtensionVariables) error {
	return &plan.ExtensionFault{Space: nsSemExt, Local: string(a), Reason: "asked to"}
}

type semBroken struct{}

func (semBroken) Run(context.Context, plan.ExtensionVariables) error {
	return errors.New("out of order")
}
