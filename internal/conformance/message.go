package conformance

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// toMessage turns ODE's normalized request (a <message> root with one
// unqualified child per part) into a message of desc: an element-typed
// part is the element inside the part's child, a type-typed part is the
// child itself.
func toMessage(normalized string, desc *exchange.MessageDesc) (*exchange.Message, error) {
	if desc == nil {
		return nil, fmt.Errorf("operation has no input message")
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromString(normalized); err != nil {
		return nil, fmt.Errorf("request is not XML: %w", err)
	}
	root := doc.Root()
	if root == nil || root.Tag != "message" {
		return nil, fmt.Errorf("request root must be <message>")
	}
	msg := exchange.NewMessage(desc.Name)
	for _, el := range root.ChildElements() {
		var pd *exchange.PartDesc
		for i := range desc.Parts {
			if desc.Parts[i].Name == el.Tag {
				pd = &desc.Parts[i]
			}
		}
		if pd == nil {
			return nil, fmt.Errorf("request part <%s> is not a part of message %s", el.Tag, desc.Name)
		}
		part := el
		if !pd.Element.IsZero() {
			kids := el.ChildElements()
			if len(kids) != 1 {
				return nil, fmt.Errorf("element part %s must hold one element, holds %d", pd.Name, len(kids))
			}
			part = kids[0]
		}
		msg.Parts[pd.Name] = selfContained(part)
	}
	return msg, nil
}

// selfContained returns a detached copy of el that declares every
// namespace prefix its ancestors declared and it does not.
func selfContained(el *etree.Element) *etree.Element {
	cp := el.Copy()
	declared := map[string]bool{}
	for _, a := range cp.Attr {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			declared[a.FullKey()] = true
		}
	}
	for p := el.Parent(); p != nil; p = p.Parent() {
		for _, a := range p.Attr {
			if (a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns")) && !declared[a.FullKey()] {
				declared[a.FullKey()] = true
				cp.CreateAttr(a.FullKey(), a.Value)
			}
		}
	}
	return cp
}

// normalize serializes an answer as ODE's harness did: an XML declaration,
// then <message> with one child per part in declared order (an
// element-typed part's element inside a child named after the part), with
// '>' in text escaped as &gt; like Xerces.
func normalize(msg *exchange.Message, desc *exchange.MessageDesc) (string, error) {
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	root := doc.CreateElement("message")
	names := []string{}
	elemPart := map[string]bool{}
	if desc != nil {
		for _, p := range desc.Parts {
			names = append(names, p.Name)
			elemPart[p.Name] = !p.Element.IsZero()
		}
	}
	for _, n := range names {
		el := msg.Part(n)
		if el == nil {
			continue
		}
		if elemPart[n] {
			root.CreateElement(n).AddChild(el.Copy())
			continue
		}
		cp := el.Copy()
		cp.Space, cp.Tag = "", n
		root.AddChild(cp)
	}
	pruneDecls(root)
	doc.WriteSettings = etree.WriteSettings{CanonicalText: true, CanonicalAttrVal: true}
	return doc.WriteToString()
}

var prefixRE = regexp.MustCompile(`([A-Za-z_][\w.-]*):[A-Za-z_]`)

// pruneDecls drops the namespace declarations of root's subtree whose
// prefix nothing uses: a part decoded from a SOAP body carries the
// envelope's declarations (soapenv, the rpc wrapper's), which ODE's
// in-process answer never had. A prefix counts as used by element and
// attribute names and, for QName-valued content, by "prefix:" in text and
// attribute values.
func pruneDecls(root *etree.Element) {
	used := map[string]bool{}
	usedIn(root, used)
	for i := 0; i < len(root.Attr); i++ {
		if a := root.Attr[i]; a.Space == "xmlns" && !used[a.Key] {
			root.RemoveAttr(a.FullKey())
			i--
		}
	}
	for _, c := range root.ChildElements() {
		pruneDecls(c)
	}
}

// usedIn adds the prefixes e's subtree uses to used.
func usedIn(e *etree.Element, used map[string]bool) {
	used[e.Space] = true
	for _, a := range e.Attr {
		if a.Space != "xmlns" && (a.Space != "" || a.Key != "xmlns") {
			used[a.Space] = true
			for _, m := range prefixRE.FindAllStringSubmatch(a.Value, -1) {
				used[m[1]] = true
			}
		}
	}
	for _, m := range prefixRE.FindAllStringSubmatch(e.Text(), -1) {
		used[m[1]] = true
	}
	for _, c := range e.ChildElements() {
		usedIn(c, used)
	}
}

// compileJava translates a Java regex, matched with DOTALL and matches(),
// to an anchored RE2 regexp. Java-only syntax (look-around, back
// references, possessive quantifiers) does not compile and is reported.
func compileJava(re string) (*regexp.Regexp, error) {
	return regexp.Compile(`(?s)^(?:` + re + `)$`)
}

// mismatch explains why answer does not match re: the first piece of the
// pattern between ".*" wildcards that is not found in order, with the
// answer around where it was expected.
func mismatch(re, answer string) string {
	pos := 0
	for _, piece := range strings.Split(re, ".*") {
		if piece == "" {
			continue
		}
		p, err := regexp.Compile(`(?s)` + piece)
		if err != nil {
			break
		}
		loc := p.FindStringIndex(answer[pos:])
		if loc == nil {
			return fmt.Sprintf("expected /%s/ after offset %d; answer from there: %s", clip(piece, 120), pos, clip(answer[pos:], 300))
		}
		pos += loc[1]
	}
	return fmt.Sprintf("answer does not match /%s/: %s", clip(re, 160), clip(answer, 300))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
