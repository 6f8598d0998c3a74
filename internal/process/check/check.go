package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Finding is one violation of a static analysis rule.
type Finding struct {
	Rule    string // "SA00003"
	Section string // of WS-BPEL 2.0, "12.5"
	Pos     xmldoc.Pos
	// Element is the offending element as it reads in the file, with the
	// attribute that names it: `catch faultName="bpel:selectionFailure"`.
	Element string
	// Msg says what is wrong and what to change, in one sentence.
	Msg string
}

func (f *Finding) Error() string {
	return fmt.Sprintf("%s: <%s>: %s: %s", f.Pos, f.Element, f.Rule, f.Msg)
}

// Rule is one static analysis requirement of WS-BPEL 2.0.
type Rule struct {
	ID      string // "SA00003"
	Section string // "12.5"
	check   func(p *pass)
}

// Rules is the table of the rules Check checks, in the order of their
// numbers; docs/static-analysis.md lists the others and why.
func Rules() []Rule {
	return []Rule{
		{"SA00001", "3", checkSolicitResponse},
		{"SA00002", "3", checkOverloaded},
		{"SA00003", "5.2", checkExitOnStandardFault},
		{"SA00005", "5.2", checkPortTypeAttr},
		{"SA00006", "5.2", checkRethrowPlace},
		{"SA00007", "5.2", checkCompensateScopePlace},
		{"SA00008", "5.2", checkCompensatePlace},
		{"SA00010", "5.4", checkImported},
		{"SA00011", "5.4", checkImportNamespace},
		{"SA00012", "5.4", checkImportNoNamespace},
		{"SA00013", "5.4", checkImportType},
		{"SA00014", "5.4", checkImportConflicts},
		{"SA00015", "5.5", checkStartActivity},
		{"SA00016", "6.2", checkPartnerLinkRoles},
		{"SA00017", "6.2", checkInitializePartnerRole},
		{"SA00018", "6.2", checkPartnerLinkNames},
		{"SA00019", "7.2", checkPropertyType},
		{"SA00020", "7.3", checkAliasAttrs},
		{"SA00021", "7.3", checkCorrelationAliases},
		{"SA00022", "7.3", checkAliasUnique},
		{"SA00023", "8.1", checkVariableNames},
		{"SA00024", "8.1", checkVariableNCName},
		{"SA00025", "8.1", checkVariableType},
		{"SA00028", "8.2.5", checkJoinConditionFunctions},
		{"SA00029", "8.2.6", checkAliasQuery},
		{"SA00030", "8.3", checkGetVariablePropertyArgs},
		{"SA00031", "8.3", checkGetVariablePropertyQName},
		{"SA00032", "8.4", checkCopyVariants},
		{"SA00033", "8.4", checkToExpression},
		{"SA00034", "8.4", checkPartOnNonMessage},
		{"SA00035", "8.4", checkFromMyRole},
		{"SA00036", "8.4", checkFromPartnerRole},
		{"SA00037", "8.4", checkToPartnerLink},
		{"SA00038", "8.4", checkLiteral},
		{"SA00039", "8.4", checkXslStylesheet},
		{"SA00040", "8.4", checkXslParamPairs},
		{"SA00041", "8.4", checkXslParamNames},
		{"SA00042", "8.4.2", checkKeepSrcElementName},
		{"SA00043", "8.4.3", checkCopyMessageTypes},
		{"SA00044", "9.1", checkCorrelationSetNames},
		{"SA00045", "9.2", checkPropertySimple},
		{"SA00046", "9.2", checkCorrelationPattern},
		{"SA00047", "10.3", checkMessageVariablesPresent},
		{"SA00048", "10.3", checkInvokeVariableTypes},
		{"SA00050", "10.3.1", checkToPartsComplete},
		{"SA00051", "10.3.1", checkInputVariableToParts},
		{"SA00052", "10.3.1", checkOutputVariableFromParts},
		{"SA00053", "10.3.1", checkFromPartNames},
		{"SA00054", "10.3.1", checkToPartNames},
		{"SA00055", "10.4", checkReceiveFromParts},
		{"SA00056", "10.4", checkBeforeStart},
		{"SA00057", "10.4", checkStartCorrelations},
		{"SA00058", "10.4", checkReceiveReplyVariableTypes},
		{"SA00059", "10.4", checkReplyToParts},
		{"SA00061", "10.4.1", checkMessageExchangeDeclared},
		{"SA00062", "11.5", checkPickCreateInstance},
		{"SA00063", "11.5", checkOnMessageFromParts},
		{"SA00064", "11.6", checkLinkNames},
		{"SA00065", "11.6.1", checkLinkDeclared},
		{"SA00066", "11.6.1", checkLinkEnds},
		{"SA00067", "11.6.1", checkLinkPairs},
		{"SA00068", "11.6.1", checkSourceNames},
		{"SA00069", "11.6.1", checkTargetNames},
		{"SA00070", "11.6.1", checkLinkRepeatable},
		{"SA00071", "11.6.1", checkLinkHandlers},
		{"SA00072", "11.6.1", checkLinkCycles},
		{"SA00073", "11.6.2", checkJoinConditionLinks},
		{"SA00074", "11.7", checkCounterConstants},
		{"SA00075", "11.7", checkBranchesConstant},
		{"SA00076", "11.7", checkCounterVariable},
		{"SA00077", "12.4.3.1", checkCompensateTargetEnclosed},
		{"SA00078", "12.4.3.1", checkCompensateTargetKind},
		{"SA00079", "12.4.4.3", checkHandlerRootScope},
		{"SA00080", "12.5", checkFaultHandlersEmpty},
		{"SA00081", "12.5", checkCatchVariable},
		{"SA00082", "12.5.2", checkPeerScopeCycles},
		{"SA00083", "12.7", checkEventHandlersEmpty},
		{"SA00084", "12.7.1", checkOnEventPartnerLink},
		{"SA00085", "12.7.1", checkOnEventFromParts},
		{"SA00086", "12.7.1", checkOnEventRedeclared},
		{"SA00087", "12.7.1", checkOnEventType},
		{"SA00088", "12.7.1", checkCorrelationSetDeclared},
		{"SA00089", "12.7.1", checkOnEventMessageExchange},
		{"SA00090", "12.7.1", checkOnEventVariableType},
		{"SA00091", "12.8", checkIsolated},
		{"SA00092", "12.4.3", checkScopeNames},
		{"SA00093", "12.5", checkDuplicateCatch},
	}
}

// Check runs every rule of Rules over the process d, whose imports w
// holds, and returns every violation in file and line order. d must be a
// WS-BPEL process document (its root a <process>).
func Check(d *xmldoc.Document, w *wsdl.Set) []*Finding {
	return CheckTree(ast.Parse(d), w)
}

// CheckTree is Check over the syntax tree of the process (ast.Parse), for
// a caller that has it already (the compiler).
func CheckTree(proc *ast.Process, w *wsdl.Set) []*Finding {
	p := newPass(proc, w)
	for _, r := range Rules() {
		p.rule = r
		r.check(p)
	}
	sort.SliceStable(p.out, func(i, j int) bool {
		a, b := p.out[i], p.out[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Rule < b.Rule
	})
	return p.out
}

// pass is one run of the rules over one process.
type pass struct {
	proc *ast.Process
	root *ast.Element
	w    *wsdl.Set
	rule Rule
	out  []*Finding
	// all is every element of the process in document order; byTag its
	// WS-BPEL elements by local name, in document order.
	all   []*ast.Element
	byTag map[string][]*ast.Element
	// tns caches importedNamespace by location.
	tns map[string]importedNS
	// defs are the definitions of the imported documents, once read
	// (importedDefinitions).
	defs *definitions
	// sources and targets are the link ends (links), once linked.
	linked           bool
	sources, targets []linkEnd
}

func newPass(proc *ast.Process, w *wsdl.Set) *pass {
	p := &pass{proc: proc, root: &proc.Element, w: w, byTag: map[string][]*ast.Element{}, tns: map[string]importedNS{}}
	ast.Inspect(proc, func(n ast.Node) bool {
		e := n.Elem()
		p.all = append(p.all, e)
		if e.IsBPEL() {
			p.byTag[e.Tag] = append(p.byTag[e.Tag], e)
		}
		return true
	})
	return p
}

// report records a violation of the current rule at e.
func (p *pass) report(e *ast.Element, format string, args ...any) {
	p.out = append(p.out, &Finding{Rule: p.rule.ID, Section: p.rule.Section, Pos: e.Pos, Element: describe(e), Msg: fmt.Sprintf(format, args...)})
}

// reportAt records a violation of the current rule in another file (a
// WSDL's), where pos says.
func (p *pass) reportAt(pos xmldoc.Pos, element, format string, args ...any) {
	p.out = append(p.out, &Finding{Rule: p.rule.ID, Section: p.rule.Section, Pos: pos, Element: element, Msg: fmt.Sprintf(format, args...)})
}

// nameAttrs are the attributes that name an element, in the order
// describe looks for them.
var nameAttrs = []string{"name", "faultName", "linkName", "partnerLink", "variable", "target", "set", "part", "location", "counterName"}

// describe is e's tag as written, with the first attribute that names it.
func describe(e *ast.Element) string {
	tag := e.FullTag()
	for _, a := range nameAttrs {
		if v := e.AttrOr(a, ""); v != "" {
			return fmt.Sprintf("%s %s=%q", tag, a, v)
		}
	}
	return tag
}

// each calls f for every BPEL element of the process with one of tags,
// in document order.
func (p *pass) each(f func(e *ast.Element), tags ...string) {
	if len(tags) == 1 {
		for _, e := range p.byTag[tags[0]] {
			f(e)
		}
		return
	}
	n := 0
	for _, t := range tags {
		n += len(p.byTag[t])
	}
	if n == 0 {
		return
	}
	for _, e := range p.all {
		if in(e.Tag, tags...) && isBPEL(e) {
			f(e)
		}
	}
}

func in(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// isBPEL reports whether e is in WS-BPEL 2.0's namespace (or the 2004
// draft's, which ODE read as an alias).
func isBPEL(e *ast.Element) bool { return e.IsBPEL() }

// isActivity reports whether e is one of WS-BPEL 2.0's activities (the
// list is the syntax tree's).
func isActivity(e *ast.Element) bool { return ast.IsActivity(e) }

// children are e's child elements in the BPEL namespace named tag.
func children(e *ast.Element, tag string) []*ast.Element { return e.ChildrenTagged(tag) }

func child(e *ast.Element, tag string) *ast.Element { return e.Child(tag) }

// grandchildren are the tag children of e's wrapper children (the
// <variable>s of <variables>).
func grandchildren(e *ast.Element, wrapper, tag string) []*ast.Element {
	var out []*ast.Element
	for _, w := range children(e, wrapper) {
		out = append(out, children(w, tag)...)
	}
	return out
}

// activityChildren are e's child elements that are activities.
func activityChildren(e *ast.Element) []*ast.Element {
	var out []*ast.Element
	for _, c := range e.Children() {
		if isActivity(c) {
			out = append(out, c)
		}
	}
	return out
}

// isScope reports a process or scope: what declares variables, partner
// links, correlation sets and message exchanges.
func isScope(e *ast.Element) bool {
	switch e.Node().(type) {
	case *ast.Scope, *ast.Process:
		return e.IsBPEL() // the root is a Process node whatever it is
	}
	return false
}

// enclosingScope is the nearest scope or process above e.
func enclosingScope(e *ast.Element) *ast.Element {
	for a := e.Parent(); a != nil; a = a.Parent() {
		if isScope(a) {
			return a
		}
	}
	return nil
}

// within reports whether e is a descendant of (or is) anc.
func within(e, anc *ast.Element) bool { return e.Within(anc) }

// attr is e's unqualified attribute, "" when absent.
func attr(e *ast.Element, name string) string { return e.Attr(name) }

func hasAttr(e *ast.Element, name string) bool { return e.HasAttr(name) }

type qname = exchange.QName

// qattr resolves e's QName-valued attribute; ok is false when it is absent
// or its prefix is undeclared (the compiler reports that).
func qattr(e *ast.Element, name string) (qname, bool) {
	v := attr(e, name)
	if v == "" {
		return qname{}, false
	}
	sp, local, err := e.ResolveQName(v, true)
	if err != nil {
		return qname{}, false
	}
	return qname{Space: sp, Local: local}, true
}

func yes(e *ast.Element, name string) bool { return attr(e, name) == "yes" }

// expression is the text of an expression element (its character data).
func expression(e *ast.Element) string { return strings.TrimSpace(e.Text()) }

// compared shows two names a finding says differ: their local names, or,
// when those are the same, each with its namespace ({urn:a}riskPT is not
// {urn:b}riskPT), so that the message says where they differ.
func compared(a, b qname) (string, string) {
	if a.Local == b.Local {
		return a.String() + nsNone(a), b.String() + nsNone(b)
	}
	return a.Local, b.Local
}

// nsNone marks a name in no namespace, which String shows bare.
func nsNone(q qname) string {
	if q.Space == "" {
		return " (no namespace)"
	}
	return ""
}
