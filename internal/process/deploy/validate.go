package deploy

import (
	"slices"
	"sort"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/suggest"
)

// ddRule is what one element of ODE's deploy namespace may hold: its
// attributes (unqualified), its children in ODE's namespace and its
// children in orchd's (urn:orchd:deploy), each with its attributes.
// Elements and attributes of other namespaces are extensions, always
// allowed and not looked into.
type ddRule struct {
	attrs []string
	ode   []string
	orchd map[string][]string
	// lax: the content is anything (a <property>'s value).
	lax bool
}

// odeRule is the rule of the element tag of ODE's deploy namespace
// (http://www.apache.org/ode/schemas/dd/2007/03, and the legacy
// fivesight one), from ODE's dd.xsd, with orchd's extensions; false
// when ODE's schema has no such element.
func odeRule(tag string) (ddRule, bool) {
	switch tag {
	case "deploy":
		// A <process-events> here, outside any process, is ignored, as
		// ODE ignored it (ODE's own TestFlowLinks bundle has one).
		return ddRule{ode: []string{"process", "process-events"}}, true
	case "process":
		return ddRule{attrs: []string{"name", "fileName", "bpel11wsdlFileName"},
			ode: []string{"active", "retired", "in-memory", "property", "process-events", "provide", "invoke",
				"mex-interceptors", "type", "cleanup", "schedule"},
			orchd: map[string][]string{"maxSteps": nil, "uncaughtFailure": nil, "waive": {"rules"},
				"partnerAllow": {"host", "port"}, "compat": nil, "maxVariableBytes": nil, "maxRunBytes": nil,
				"retention": retentionAttrs, "validateReplies": nil}}, true
	case "property":
		// name a QName; the legacy namespace's name and namespace.
		return ddRule{attrs: []string{"name", "namespace"}, lax: true}, true
	case "process-events":
		return ddRule{attrs: []string{"generate"}, ode: []string{"enable-event", "scope-events"}}, true
	case "scope-events":
		return ddRule{attrs: []string{"name"}, ode: []string{"enable-event"}}, true
	case "provide":
		return ddRule{attrs: []string{"partnerLink"}, ode: []string{"service", "enableSharing"},
			orchd: map[string][]string{"replyTimeout": {"operation"},
				"usernameToken": {"credentials", "passwordType", "freshness"}}}, true
	case "invoke":
		return ddRule{attrs: []string{"partnerLink", "usePeer2Peer"}, ode: []string{"service", "binding"},
			orchd: map[string][]string{"idempotent": {"operation"}, "timeout": {"operation"},
				"basicAuth":       {"user", "passwordFile", "passwordEnv"},
				"validateReplies": nil, "addressing": nil,
				"usernameToken": {"user", "passwordFile", "passwordEnv", "passwordType"}}}, true
	case "service":
		return ddRule{attrs: []string{"name", "port"}}, true
	case "binding":
		return ddRule{attrs: []string{"name"}}, true
	case "mex-interceptors":
		return ddRule{ode: []string{"mex-interceptor"}}, true
	case "mex-interceptor":
		return ddRule{ode: []string{"class-name"}}, true
	case "cleanup":
		return ddRule{attrs: []string{"on"}, ode: []string{"category", "filter"}}, true
	case "schedule":
		return ddRule{attrs: []string{"when"}, ode: []string{"cleanup"}}, true
	case "active", "retired", "in-memory", "type", "enable-event", "class-name", "category", "filter", "enableSharing":
		return ddRule{}, true
	}
	return ddRule{}, false
}

// orchdHome lists, for each element of orchd's deploy namespace, the ODE
// elements it may be a child of, for "belongs in" messages.
func orchdHome(tag string) []string {
	var in []string
	for _, p := range []string{"process", "provide", "invoke"} {
		r, _ := odeRule(p)
		if _, ok := r.orchd[tag]; ok {
			in = append(in, "<"+p+">")
		}
	}
	return in
}

// validate checks every element and attribute of ODE's deploy namespace
// and of orchd's under root against what ODE's dd.xsd and orchd know:
// an unknown one, or a known one in the wrong place, is an error naming
// its line and the nearest known name. A typo would otherwise be ignored
// (<in-memorry> deploys a persistent process without a word).
func validate(doc *xmldoc.Document, root *etree.Element, errs *xmldoc.Errors) {
	r, _ := odeRule(root.Tag)
	validateIn(doc, root, r, errs)
}

func isODE(ns string) bool { return ns == xmldoc.NSDD || ns == xmldoc.NSDDLegacy }

// validateIn checks the attributes and children of e, an ODE element
// whose rule is r.
func validateIn(doc *xmldoc.Document, e *etree.Element, r ddRule, errs *xmldoc.Errors) {
	checkAttrs(doc, e, "<"+e.Tag+">", r.attrs, errs)
	if r.lax {
		return
	}
	for _, c := range e.ChildElements() {
		switch ns := c.NamespaceURI(); {
		case isODE(ns):
			cr, known := odeRule(c.Tag)
			switch {
			case slices.Contains(r.ode, c.Tag):
				validateIn(doc, c, cr, errs)
			case known:
				errs.Add(doc.Pos(c), c.FullTag(), "not allowed in <%s> (ODE's deploy.xml schema)%s", e.Tag, knownList(c.Tag, r.ode))
			default:
				errs.Add(doc.Pos(c), c.FullTag(), "unknown element in <%s> of ODE's deploy namespace%s", e.Tag, knownList(c.Tag, r.ode))
			}
		case ns == nsOrchdDD:
			if attrs, ok := r.orchd[c.Tag]; ok {
				checkAttrs(doc, c, c.FullTag(), attrs, errs)
				continue
			}
			if home := orchdHome(c.Tag); len(home) > 0 {
				errs.Add(doc.Pos(c), c.FullTag(), "belongs in %s, not in <%s>", strings.Join(home, " or "), e.Tag)
				continue
			}
			errs.Add(doc.Pos(c), c.FullTag(), "unknown element of orchd's deploy namespace (%s) in <%s>%s", nsOrchdDD, e.Tag, knownList(c.Tag, orchdNames(r)))
		}
	}
}

// checkAttrs reports the unqualified attributes of e not in known.
// Namespace declarations and qualified attributes (extensions, xsi:)
// are allowed.
func checkAttrs(doc *xmldoc.Document, e *etree.Element, what string, known []string, errs *xmldoc.Errors) {
	for _, a := range e.Attr {
		if a.Space != "" || a.Key == "xmlns" || slices.Contains(known, a.Key) {
			continue
		}
		if len(known) == 0 {
			errs.Add(doc.Pos(e), strings.Trim(what, "<>"), "unknown attribute %s: it takes none", a.Key)
			continue
		}
		errs.Add(doc.Pos(e), strings.Trim(what, "<>"), "unknown attribute %s%s", a.Key, knownList(a.Key, known))
	}
}

// orchdNames is the orchd elements r allows, sorted.
func orchdNames(r ddRule) []string {
	names := make([]string, 0, len(r.orchd))
	for n := range r.orchd {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// knownList is "; did you mean X?" when a name of known is near name,
// else the names known there ("; known here: a, b"), or "" when none
// is.
func knownList(name string, known []string) string {
	if s := suggest.DidYouMean(name, known); s != "" {
		return s
	}
	if len(known) == 0 {
		return "; it takes no child elements here"
	}
	return "; known here: " + strings.Join(known, ", ")
}
