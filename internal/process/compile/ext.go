package compile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Namespaces of Apache ODE extensions the compiler recognizes.

// language resolves the expression or query language (attr is
// "expressionLanguage" or "queryLanguage") that applies to e: its own
// attribute, else the process's, else XPath 1.0. xpath2 reports an XPath
// 2.0 declaration, which compiles with internal/xpath2 (xpath2.go); ok is
// false, with the problem reported, for any other language.
func (c *compiler) language(e *ast.Element, attr string) (xpath2, ok bool) {
	lang := e.AttrOr(attr, "")
	inherited := lang == ""
	if inherited {
		lang = c.root.AttrOr(attr, expr.LangXPath10)
	}
	switch canonLang(lang) {
	case expr.LangXPath10:
		return false, true
	case expr.LangXPath20, langXQuery10:
		return true, true
	}
	if !inherited { // the process-level declaration is reported once
		c.unsupported(e, fmt.Sprintf("SA00004: %s %q (XPath 1.0, XPath 2.0 and XQuery 1.0 only)", attr, lang))
	}
	return false, false
}

// langXQuery10 is XQuery 1.0, compiled by internal/xpath2's CompileXQuery
// and run like XPath 2.0 (xpath2.go).
const langXQuery10 = "urn:oasis:names:tc:wsbpel:2.0:sublang:xquery1.0"

// langXQuery10AE is bpel-g's (ActiveVOS's) name for XQuery 1.0, which
// its sample processes declare: an alias of langXQuery10.
const langXQuery10AE = "urn:active-endpoints:expression-language:xquery1.0"

// canonLang is the WS-BPEL URI of an expression language named by an
// alias orchd accepts, or lang.
func canonLang(lang string) string {
	if lang == langXQuery10AE {
		return langXQuery10
	}
	return lang
}

// isXQuery reports whether the language that applies to e's attr
// (expressionLanguage or queryLanguage) is XQuery 1.0.
func (c *compiler) isXQuery(e *ast.Element, attr string) bool {
	lang := e.AttrOr(attr, "")
	if lang == "" {
		lang = c.root.AttrOr(attr, expr.LangXPath10)
	}
	return canonLang(lang) == langXQuery10
}

// checkProcessLanguage validates a process-level expressionLanguage or
// queryLanguage attribute.
func (c *compiler) checkProcessLanguage(root *ast.Element, attr, lang string) {
	if lang = canonLang(lang); lang != expr.LangXPath10 && lang != expr.LangXPath20 && lang != langXQuery10 {
		c.unsupported(root, fmt.Sprintf("SA00004: %s %q (XPath 1.0, XPath 2.0 and XQuery 1.0 only)", attr, lang))
	}
}

// exprError reports an error from rewrite or from compiling an expression
// written in e. Errors marked ErrNotSupported keep the mark.
func (c *compiler) exprError(e *ast.Element, err error) {
	if errors.Is(err, xmldoc.ErrNotSupported) {
		c.errs.AddErr(&xmldoc.CompileError{Pos: c.pos(e), Element: e.Tag, Err: fmt.Errorf("%w at %s", err, c.pos(e))})
		return
	}
	c.errorf(e, "%v", err)
}

// trimUnterminatedLiteral drops an unterminated string literal at the end
// of an XPath 1.0 expression. ODE evaluated XPath 1.0 with Jaxen, whose
// lexer ends the token stream at a quote that is never closed, so
// `concat($a, ' World')"` (a stray quote, in six corpus processes) ran as
// `concat($a, ' World')`. ok reports that something was dropped.
func trimUnterminatedLiteral(text string) (trimmed string, ok bool) {
	for i := 0; i < len(text); i++ {
		q := text[i]
		if q != '\'' && q != '"' {
			continue
		}
		j := strings.IndexByte(text[i+1:], q)
		if j < 0 {
			return strings.TrimSpace(text[:i]), true
		}
		i += j + 1
	}
	return text, false
}

// extensions records a process's <extensions> declarations. A namespace
// declared mustUnderstand="yes" that orchd does not implement refuses the
// process; one declared "no" is accepted, and its elements and attributes
// are ignored.
func (c *compiler) extensions(exts *ast.Extensions) {
	if c.exts == nil {
		c.exts = map[string]bool{}
	}
	for _, n := range exts.Extensions {
		x := &n.Element
		ns := x.AttrOr("namespace", "")
		if ns == "" {
			c.errorf(x, "<extension> needs a namespace")
			continue
		}
		must := x.AttrOr("mustUnderstand", "no")
		switch must {
		case "yes", "no":
		default:
			c.errorf(x, "mustUnderstand must be yes or no, not %q", must)
			continue
		}
		c.exts[ns] = c.exts[ns] || must == "yes"
		if _, registered := c.ext[ns]; must == "yes" && !knownExtension(ns) && !registered {
			c.unsupported(x, fmt.Sprintf("SA00009: extension %s declared mustUnderstand=\"yes\"", ns))
		}
	}
}

// extensionKnown reports whether the process declares the extension
// namespace ns, and whether it must be understood.
func (c *compiler) extensionKnown(ns string) (declared, mustUnderstand bool) {
	must, declared := c.exts[ns]
	return declared, must
}

// knownExtension reports whether orchd implements the extension namespace
// ns as a built-in: ODE's REST extension activities (rest.go). Others
// are known when registered (LoadOptions.Extensions, extension.go).
func knownExtension(ns string) bool { return ns == xmldoc.NSBPEL4RestLight }

// extensionActivity compiles an <extensionActivity>: its child element is
// the activity. orchd runs ODE's bpel4restlight activities (rest.go) and
// those of a registered extension (extension.go); any other acts as
// <empty> (WS-BPEL 2.0 10.9), as one whose namespace is declared
// mustUnderstand="yes" already refused the bundle (see extensions).
func (c *compiler) extensionActivity(n *ast.ExtensionActivity, b plan.Base) plan.Activity {
	for _, x := range n.Children() {
		if isBPEL(x) {
			continue
		}
		if r, ok := x.Node().(*ast.RestActivity); ok {
			b.Pos = c.pos(x)
			if b.Name == "" {
				b.Name = x.AttrOr("name", "")
			}
			return c.restActivity(r, b)
		}
		act, ok := c.compileExtension(x, "activity")
		if !ok {
			return &plan.Empty{Base: b}
		}
		if act != nil {
			b.Pos = c.pos(x)
			if b.Name == "" {
				b.Name = x.AttrOr("name", "")
			}
			if w, ok := act.(plan.ExtensionWaiter); ok {
				return c.extWait(w, b)
			}
			return &plan.ExtActivity{Base: b, Act: act}
		}
	}
	return &plan.Empty{Base: b}
}

// extensionAssign compiles an <extensionAssignOperation> of an <assign>
// into a copyOp that runs the registered operation in its place among
// the copies (so with the same atomicity). A namespace with no
// registered implementation is refused, as WS-BPEL gives it no meaning
// orchd could run.
func (c *compiler) extensionAssign(e *ast.Element) *plan.CopyOp {
	x := extensionElement(e)
	if x == nil {
		c.errorf(e, "<extensionAssignOperation> needs an extension element")
		return nil
	}
	act, ok := c.compileExtension(x, "assign operation")
	if !ok {
		return nil
	}
	if _, registered := c.ext[x.Space]; !registered {
		c.unsupported(e, fmt.Sprintf("<extensionAssignOperation> of namespace %s (no extension registered for it)", x.Space))
		return nil
	}
	if act == nil {
		return nil // an element the optional extension does not define
	}
	return &plan.CopyOp{Pos: c.pos(x), Ext: act, ExtVars: c.extResolved}
}

// externalVariable reports whether a <variable> is an ODE external
// variable (an attribute in ODE's externalVariables namespace, such as
// xvar:id), and which attribute says so.
func externalVariable(e *ast.Element) (string, bool) {
	for _, a := range e.Attrs {
		if a.Space == "" || a.Space == "xmlns" {
			continue
		}
		if ns, _ := lookupPrefix(e, a.Space); ns == xmldoc.NSODEExtVar {
			return a.Space + ":" + a.Key, true
		}
	}
	return "", false
}

// lookupPrefix resolves a namespace prefix in the scope of e.
func lookupPrefix(e *ast.Element, prefix string) (string, bool) {
	for p := e; p != nil; p = p.Parent() {
		for _, a := range p.Attrs {
			if a.Space == "xmlns" && a.Key == prefix {
				return a.Value, true
			}
		}
	}
	return "", false
}
