package xsd

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// Namespaces of XML Schema and of its instance attributes.
const (
	NS    = "http://www.w3.org/2001/XMLSchema"
	NSXSI = "http://www.w3.org/2001/XMLSchema-instance"
	nsXML = "http://www.w3.org/XML/1998/namespace"
)

const nsWSDL = "http://schemas.xmlsoap.org/wsdl/"

// ErrUnsupported marks a schema construct this package cannot check.
var ErrUnsupported = errors.New("not supported")

// ErrUndeclared is returned by Element and Type for a name no loaded
// schema declares.
var ErrUndeclared = errors.New("not declared")

// QName is an expanded XML name.
type QName struct{ Space, Local string }

func (q QName) String() string {
	if q.Space == "" {
		return q.Local
	}
	return "{" + q.Space + "}" + q.Local
}

// Reader returns the content of a file of the bundle, by slash-separated
// name relative to the bundle folder.
type Reader func(name string) ([]byte, error)

// Set is the compiled schemas of a bundle. It is read-only once Load
// returns.
type Set struct {
	read     Reader
	loaded   map[string]bool
	docs     []*schemaDoc
	elements map[QName]*Element
	types    map[QName]*Type
	groups   map[QName]*comp
	agroups  map[QName]*comp
	attrs    map[QName]*attrDecl
	heads    map[QName]bool // heads of substitution groups
	problems []error
	builtins map[string]*Type
}

// schemaDoc is one <xsd:schema> (a file, or inline in a WSDL).
type schemaDoc struct {
	file      string
	doc       *xmldoc.Document
	tns       string
	qualElems bool
	qualAttrs bool
	// chameleon: included without a targetNamespace, so its unqualified
	// references take the including schema's namespace.
	chameleon bool
}

// comp is a global component's declaration, with where it was written.
type comp struct {
	e           *etree.Element
	sd          *schemaDoc
	unsupported string // set for components inside xsd:redefine
}

func (sd *schemaDoc) errorf(e *etree.Element, format string, args ...any) error {
	return fmt.Errorf("%s: <xsd:%s>: %s", sd.doc.Pos(e), e.Tag, fmt.Sprintf(format, args...))
}

func (sd *schemaDoc) unsupported(e *etree.Element, what string) error {
	return fmt.Errorf("%s: <xsd:%s>: %w: %s", sd.doc.Pos(e), e.Tag, ErrUnsupported, what)
}

// maxDocs bounds the schema documents one Set loads (imports whose
// locations grow, a/a.xsd importing a/a/a.xsd..., would go on forever).
const maxDocs = 1000

// Load reads the schemas of files (.xsd files, and WSDLs whose
// <types> hold schemas) and what they import and include, through read.
// Names are resolved relative to the file that names them. Problems
// (unreadable or malformed files) are kept in Problems; the Set holds
// whatever did load.
func Load(read Reader, files []string) *Set {
	s := &Set{read: read, loaded: map[string]bool{}, elements: map[QName]*Element{}, types: map[QName]*Type{},
		groups: map[QName]*comp{}, agroups: map[QName]*comp{}, attrs: map[QName]*attrDecl{}, heads: map[QName]bool{}}
	s.builtins = builtinTypes()
	for _, f := range files {
		s.loadFile(path.Clean(f), "", false, xmldoc.Pos{File: f})
	}
	s.compileAll()
	return s
}

// Problems returns what could not be loaded.
func (s *Set) Problems() []error { return s.problems }

func (s *Set) loadFile(name, chameleon string, include bool, from xmldoc.Pos) {
	key := name
	if include {
		key += "#" + chameleon
	}
	if s.loaded[key] {
		return
	}
	if len(s.loaded) >= maxDocs {
		s.problems = append(s.problems, fmt.Errorf("%s: more than %d schema documents: %s not loaded", from, maxDocs, name))
		return
	}
	s.loaded[key] = true
	data, err := s.read(name)
	if err != nil {
		s.problems = append(s.problems, fmt.Errorf("%s: cannot read schema %s: %w", from, name, err))
		return
	}
	doc, err := xmldoc.Parse(name, data)
	if err != nil {
		s.problems = append(s.problems, err)
		return
	}
	root := doc.Root
	switch {
	case root.NamespaceURI() == NS && root.Tag == "schema":
		s.addSchema(name, doc, root, chameleon, include)
	case root.NamespaceURI() == nsWSDL && root.Tag == "definitions":
		for _, t := range root.ChildElements() {
			if t.NamespaceURI() != nsWSDL || t.Tag != "types" {
				continue
			}
			for _, se := range t.ChildElements() {
				if se.NamespaceURI() == NS && se.Tag == "schema" {
					s.addSchema(name, doc, se, "", false)
				}
			}
		}
	default:
		if include || strings.HasSuffix(name, ".xsd") {
			s.problems = append(s.problems, fmt.Errorf("%s: not a schema: root element is {%s}%s", doc.Pos(root), root.NamespaceURI(), root.Tag))
		}
	}
}

func (s *Set) addSchema(file string, doc *xmldoc.Document, root *etree.Element, chameleon string, include bool) {
	sd := &schemaDoc{file: file, doc: doc, tns: root.SelectAttrValue("targetNamespace", ""),
		qualElems: root.SelectAttrValue("elementFormDefault", "") == "qualified",
		qualAttrs: root.SelectAttrValue("attributeFormDefault", "") == "qualified"}
	if include && sd.tns == "" && chameleon != "" {
		sd.tns, sd.chameleon = chameleon, true
	}
	s.docs = append(s.docs, sd)
	dir := path.Dir(file)
	for _, e := range root.ChildElements() {
		if e.NamespaceURI() != NS {
			continue
		}
		switch e.Tag {
		case "import", "include":
			loc := e.SelectAttrValue("schemaLocation", "")
			if loc == "" || strings.Contains(loc, "://") {
				continue // a well-known namespace, or outside the bundle
			}
			s.loadFile(path.Clean(path.Join(dir, loc)), sd.tns, e.Tag == "include", doc.Pos(e))
		case "redefine":
			for _, c := range e.ChildElements() {
				s.register(sd, c, "xsd:redefine")
			}
		default:
			s.register(sd, e, "")
		}
	}
}

// register records a global component; the first declaration of a name
// wins (bundles often carry the same schema twice).
func (s *Set) register(sd *schemaDoc, e *etree.Element, unsupported string) {
	if e.NamespaceURI() != NS {
		return
	}
	q := QName{sd.tns, e.SelectAttrValue("name", "")}
	c := &comp{e: e, sd: sd, unsupported: unsupported}
	switch e.Tag {
	case "element":
		if _, dup := s.elements[q]; !dup {
			s.elements[q] = &Element{Name: q, c: c}
		}
		if h := e.SelectAttrValue("substitutionGroup", ""); h != "" {
			if hq, err := sd.qname(e, h); err == nil {
				s.heads[hq] = true
			}
		}
	case "complexType", "simpleType":
		if _, dup := s.types[q]; !dup {
			s.types[q] = &Type{Name: q, c: c, complex: e.Tag == "complexType"}
		}
	case "group":
		if _, dup := s.groups[q]; !dup {
			s.groups[q] = c
		}
	case "attributeGroup":
		if _, dup := s.agroups[q]; !dup {
			s.agroups[q] = c
		}
	case "attribute":
		if _, dup := s.attrs[q]; !dup {
			s.attrs[q] = &attrDecl{name: q, c: c}
		}
	}
}

// qname resolves a QName-valued schema attribute in the scope of e.
func (sd *schemaDoc) qname(e *etree.Element, v string) (QName, error) {
	sp, local, err := xmldoc.ResolveQName(e, strings.TrimSpace(v), true)
	if err != nil {
		return QName{}, err
	}
	if sp == "" && sd.chameleon {
		sp = sd.tns
	}
	return QName{sp, local}, nil
}

// Element returns the global element declaration q, or an error when no
// schema declares it or when it reaches a construct that is not
// supported (errors.Is ErrUnsupported).
func (s *Set) Element(q QName) (*Element, error) {
	d, ok := s.elements[q]
	if !ok {
		return nil, s.undeclared("element", q)
	}
	if err := s.check(d, nil, map[any]bool{}); err != nil {
		return nil, err
	}
	return d, nil
}

// Type returns the named type q (a built-in xsd type or one the schemas
// declare), checked like Element.
func (s *Set) Type(q QName) (*Type, error) {
	t := s.lookupType(q)
	if t == nil {
		return nil, s.undeclared("type", q)
	}
	if err := s.check(nil, t, map[any]bool{}); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Set) undeclared(what string, q QName) error {
	err := fmt.Errorf("%s %s is %w in the bundle's schemas", what, q, ErrUndeclared)
	if len(s.problems) > 0 {
		err = fmt.Errorf("%w (%d schema file(s) did not load; first: %v)", err, len(s.problems), s.problems[0])
	}
	return err
}

func (s *Set) lookupType(q QName) *Type {
	if q.Space == NS {
		if t, ok := s.builtins[q.Local]; ok {
			return t
		}
	}
	return s.types[q]
}

// check walks what d or t reaches and returns the first problem found.
func (s *Set) check(d *Element, t *Type, seen map[any]bool) error {
	if d != nil {
		if seen[d] {
			return nil
		}
		seen[d] = true
		if d.err != nil {
			return d.err
		}
		return s.check(nil, d.typ, seen)
	}
	if t == nil || seen[t] {
		return nil
	}
	seen[t] = true
	if t.err != nil {
		return t.err
	}
	if t.simple != nil {
		if err := checkSimple(t.simple, seen); err != nil {
			return err
		}
	}
	for _, a := range t.attrs {
		if err := s.check(nil, a.typ, seen); err != nil {
			return err
		}
	}
	for _, cd := range t.elems {
		if err := s.check(cd, nil, seen); err != nil {
			return err
		}
	}
	return nil
}

func checkSimple(st *simpleType, seen map[any]bool) error {
	for ; st != nil; st = st.base {
		if seen[st] {
			return nil
		}
		seen[st] = true
		if st.err != nil {
			return st.err
		}
		if err := checkSimple(st.item, seen); err != nil {
			return err
		}
		for _, m := range st.members {
			if err := checkSimple(m, seen); err != nil {
				return err
			}
		}
	}
	return nil
}
