package xmlparse

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/beevik/etree"
)

// Options configure Parse. The zero value uses the default Limits.
type Options struct {
	// Limits bound the document; zero fields mean their defaults.
	Limits Limits
	// EndElement, when not nil, is called at each end tag (also of an
	// empty-element tag) with the element, its depth (1 for the document
	// element) and its size in bytes from the '<' of its start tag to the
	// '>' of its end tag. An error it returns stops the parse and is
	// returned as is.
	EndElement func(e *etree.Element, depth, size int) error
	// KeepWhitespace keeps every whitespace-only text run, also between
	// child elements, as etree's own reader does. Stored state (a
	// checkpoint's variables) needs it: a variable's value is exactly
	// what was stored. Messages do not (see Parse).
	KeepWhitespace bool
}

// NoLimits returns Limits with every limit off, for documents orchd wrote
// itself (stored checkpoints), which were bounded when their parts came
// in.
func NoLimits() Limits {
	return Limits{MaxDepth: -1, MaxAttrs: -1, MaxNSDecls: -1, MaxElements: -1,
		MaxValueBytes: -1, MaxNameBytes: -1, MaxHeaderBytes: -1}
}

// shareMax is the largest input whose strings are substrings of one copy
// of it and whose nodes are cut from slabs. Larger inputs get a copy per
// string and an allocation per node, so that a small part kept for long
// does not keep a large message alive.
const shareMax = 16 << 10

// Reserved namespaces.
const (
	nsXML   = "http://www.w3.org/XML/1998/namespace"
	nsXMLNS = "http://www.w3.org/2000/xmlns/"
)

// maxInterned bounds the names a parse of a large input interns: names
// repeat, but a document of many distinct names would only fill the map.
const maxInterned = 1024

// smallScope is the number of bindings up to which a prefix is looked up
// by scanning; above it the parser keeps a map.
const smallScope = 16

// smallAttrs is the number of attributes up to which duplicates are found
// by comparing pairs; above it the parser uses a map.
const smallAttrs = 8

// binding binds a prefix ("" for the default namespace) to a URI.
type binding struct {
	prefix, uri string
	prev        int // the binding of the same prefix this one shadows, -1 if none
}

// frame is an open element.
type frame struct {
	el      *etree.Element
	nsMark  int // len(bindings) before the element's declarations
	kidMark int // len(kids) before the element's children
	start   int // offset of its '<'
}

// rawAttr is an attribute as read from a start tag.
type rawAttr struct {
	prefix, local, value string
	uri                  string // resolved namespace ("" when unprefixed)
	pos                  int
	decl                 bool // a namespace declaration
}

// attrKey is an attribute's expanded name.
type attrKey struct{ uri, local string }

// parser holds the state of one Parse.
type parser struct {
	data     []byte
	s        string // data as one string when shared
	pos      int
	lim      Limits
	end      func(*etree.Element, int, int) error
	stack    []frame
	bindings []binding
	byPrefix map[string]int // innermost binding of each prefix; nil while small
	elements int
	attrs    []rawAttr // attributes of the start tag being read, in order
	nattr    int       // how many of attrs are not declarations
	seen     map[attrKey]struct{}
	seenMax  int               // the most attributes seen held
	names    map[string]string // interned names when not shared
	buf      []byte            // decoded text
	ws       []string          // pending whitespace-only text
	keepWS   bool              // Options.KeepWhitespace
	doc      *etree.Document
	kids     []etree.Token // children of the open elements, innermost last

	// Slabs the tree's nodes are cut from when the input is shared (and
	// so kept alive by the tree anyway): a few allocations per document
	// instead of a few per element. They are used from the front,
	// counting in ints (moving a slice forward costs a GC write barrier).
	elems            []etree.Element
	texts            []etree.CharData
	toks             []etree.Token
	attrv            []etree.Attr
	ne, nt, ntk, nav int // used lengths of the slabs
}

// Parse parses the whole document data into an etree document; the result
// does not reference data.
//
// Whitespace-only text between elements (the indentation of element-only
// content, which is what SOAP payloads are) is not kept: an element keeps
// whitespace-only text only when it has no child element. This makes the
// trees the runtime copies and walks about half as large.
func Parse(data []byte, opts Options) (*etree.Document, error) {
	p, _ := parsers.Get().(*parser)
	if p == nil {
		p = &parser{stack: make([]frame, 0, 16), kids: make([]etree.Token, 0, 32)}
	}
	p.data, p.lim, p.end, p.keepWS = data, opts.Limits.WithDefaults(), opts.EndElement, opts.KeepWhitespace
	if len(data) <= shareMax {
		p.s = string(data)
		// About two '<' per element; each element has at most one text
		// and the tokens are about as many as the '<'.
		tags := bytes.Count(data, []byte{'<'})
		n := tags/2 + 1
		if n > p.lim.MaxElements {
			n = p.lim.MaxElements + 1
		}
		p.elems = make([]etree.Element, n)
		p.texts = make([]etree.CharData, n)
		p.toks = make([]etree.Token, tags+1)
		p.attrv = make([]etree.Attr, min(bytes.Count(data, []byte{'='}), 1024))
	}
	doc, err := p.parse()
	if p.small() {
		p.reset()
		parsers.Put(p)
	}
	return doc, err
}

// parsers holds parsers for reuse, for their scratch slices.
var parsers sync.Pool

// small reports whether p's scratch slices are small enough to keep.
func (p *parser) small() bool {
	const max = 1024
	return cap(p.stack) <= max && cap(p.kids) <= max && cap(p.attrs) <= max &&
		cap(p.bindings) <= max && cap(p.ws) <= max && cap(p.buf) <= 64<<10 && len(p.names) <= max && p.seenMax <= max
}

// reset drops everything a parse leaves behind but the scratch slices.
func (p *parser) reset() {
	clear(p.stack[:cap(p.stack)])
	clear(p.kids[:cap(p.kids)])
	clear(p.attrs[:cap(p.attrs)])
	clear(p.bindings[:cap(p.bindings)])
	clear(p.ws[:cap(p.ws)])
	*p = parser{
		stack: p.stack[:0], kids: p.kids[:0], attrs: p.attrs[:0],
		bindings: p.bindings[:0], ws: p.ws[:0], buf: p.buf[:0], seen: p.seen,
	}
}

// newElement returns an element with no parent.
func (p *parser) newElement(prefix, local string) *etree.Element {
	if p.s == "" {
		e := etree.NewElement(local)
		e.Space = prefix
		return e
	}
	if p.ne == len(p.elems) {
		p.elems, p.ne = make([]etree.Element, 32), 0
	}
	e := &p.elems[p.ne]
	p.ne++
	e.Space, e.Tag = prefix, local
	return e
}

// newText returns a text token with no parent.
func (p *parser) newText(s string) *etree.CharData {
	if p.s == "" {
		return etree.NewText(s)
	}
	if p.nt == len(p.texts) {
		p.texts, p.nt = make([]etree.CharData, 32), 0
	}
	t := &p.texts[p.nt]
	p.nt++
	t.Data = s
	return t
}

// add adds t to the innermost open element (or the document).
func (p *parser) add(t etree.Token) {
	if len(p.stack) == 0 {
		p.doc.AddChild(t)
		return
	}
	p.kids = append(p.kids, t)
}

// window returns an empty slice with room for n tokens.
func (p *parser) window(n int) []etree.Token {
	if p.s == "" || n > 64 {
		return make([]etree.Token, 0, n)
	}
	if len(p.toks)-p.ntk < n {
		p.toks, p.ntk = make([]etree.Token, 64), 0
	}
	w := p.toks[p.ntk : p.ntk : p.ntk+n]
	p.ntk += n
	return w
}

// attrWindow returns a slice of n attributes.
func (p *parser) attrWindow(n int) []etree.Attr {
	if p.s == "" || n > 64 {
		return make([]etree.Attr, n)
	}
	if len(p.attrv)-p.nav < n {
		p.attrv, p.nav = make([]etree.Attr, 64), 0
	}
	w := p.attrv[p.nav : p.nav+n : p.nav+n]
	p.nav += n
	return w
}

// line returns the 1-based line of offset off.
func (p *parser) line(off int) int {
	return 1 + bytes.Count(p.data[:min(off, len(p.data))], []byte{'\n'})
}

func (p *parser) errAt(off int, msg string) error {
	return &SyntaxError{Line: p.line(off), Msg: msg}
}

func (p *parser) limitAt(off int, limit string, max int) error {
	return &LimitError{Limit: limit, Max: max, Line: p.line(off)}
}

// str returns data[i:j] as a string.
func (p *parser) str(i, j int) string {
	if p.s != "" {
		return p.s[i:j]
	}
	return string(p.data[i:j])
}

// name returns the name data[i:j] as a string, interned when not shared.
func (p *parser) name(i, j int) string {
	if p.s != "" || i == j {
		return p.str(i, j)
	}
	if p.names == nil {
		p.names = make(map[string]string)
	}
	if s, ok := p.names[string(p.data[i:j])]; ok {
		return s
	}
	s := string(p.data[i:j])
	if len(p.names) < maxInterned {
		p.names[s] = s
	}
	return s
}

func (p *parser) parse() (*etree.Document, error) {
	doc := NewDocument()
	p.doc = doc
	d := p.data
	if bytes.HasPrefix(d, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	if bytes.HasPrefix(d[p.pos:], []byte("<?xml")) && len(d) > p.pos+5 && (isSpace(d[p.pos+5]) || d[p.pos+5] == '?') {
		if err := p.xmlDecl(doc); err != nil {
			return nil, err
		}
	}
	for p.pos < len(d) {
		if d[p.pos] != '<' {
			t, err := p.text()
			if err != nil {
				return nil, err
			}
			p.charData(t)
			continue
		}
		if p.pos+1 >= len(d) {
			return nil, p.errAt(p.pos, "unexpected end of document after <")
		}
		var err error
		switch d[p.pos+1] {
		case '/':
			err = p.endTag()
		case '?':
			err = p.procInst()
		case '!':
			err = p.bang()
		default:
			err = p.startTag()
		}
		if err != nil {
			return nil, err
		}
	}
	if n := len(p.stack); n > 0 {
		return nil, p.errAt(len(d), "unexpected end of document: <"+p.stack[n-1].el.FullTag()+"> is not closed")
	}
	return doc, nil
}

// xmlDecl reads the XML declaration at the start of the document.
func (p *parser) xmlDecl(doc *etree.Document) error {
	start := p.pos
	end := bytes.Index(p.data[start:], []byte("?>"))
	if end < 0 {
		return p.errAt(len(p.data), "unterminated XML declaration")
	}
	inst := p.data[start+5 : start+end]
	if err := p.checkChars(inst, start+5); err != nil {
		return err
	}
	content := string(bytes.TrimLeft(inst, " \t\r\n"))
	if !strings.HasPrefix(content, "version") {
		return p.errAt(start, "XML declaration without version")
	}
	if v := declParam("version", content); v != "1.0" {
		return p.errAt(start, "unsupported XML version "+strconv.Quote(v)+"; only version 1.0 is supported")
	}
	doc.CreateProcInst("xml", content)
	p.pos = start + end + 2
	return nil
}

// declParam returns the value of param in an XML declaration.
func declParam(param, s string) string {
	for s != "" {
		s = strings.TrimLeft(s, " \t\r\n")
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			return ""
		}
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
			return ""
		}
		q := rest[0]
		val, after, ok := strings.Cut(rest[1:], string(q))
		if !ok {
			return ""
		}
		if strings.TrimSpace(name) == param {
			return val
		}
		s = after
	}
	return ""
}

// charData adds a text run or CDATA section t to the innermost open
// element, keeping whitespace-only text only where it is content. Text
// outside the document element is kept too, for the caller to refuse.
func (p *parser) charData(t string) {
	if t == "" {
		return
	}
	if isAllSpace(t) && (!p.keepWS || len(p.stack) == 0) {
		if len(p.stack) > 0 {
			p.ws = append(p.ws, t)
		}
		return
	}
	if len(p.ws) > 0 {
		p.ws = append(p.ws, t)
		t = strings.Join(p.ws, "")
		p.ws = p.ws[:0]
	}
	p.add(p.newText(t))
}

// flushWS adds the pending whitespace to the innermost open element.
func (p *parser) flushWS() {
	switch len(p.ws) {
	case 0:
		return
	case 1:
		p.add(p.newText(p.ws[0]))
	default:
		p.add(p.newText(strings.Join(p.ws, "")))
	}
	p.ws = p.ws[:0]
}

// qname reads a name at p.pos and returns the offsets of its prefix (empty
// when none) and local part.
func (p *parser) qname() (ps, pe, ls, le int, err error) {
	d := p.data
	i := p.pos
	ps = i
	colon := -1
	for i < len(d) {
		c := d[i]
		if c < utf8.RuneSelf {
			if nameByte[c] == 0 {
				break
			}
			if c == ':' {
				if colon >= 0 {
					return 0, 0, 0, 0, p.errAt(i, "invalid name: more than one colon")
				}
				colon = i
			} else if nameByte[c] == 2 && (i == ps || i == colon+1) {
				return 0, 0, 0, 0, p.errAt(i, "invalid name: starts with "+strconv.QuoteRune(rune(c)))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && n == 1 {
			return 0, 0, 0, 0, p.errAt(i, "invalid UTF-8")
		}
		first := i == ps || i == colon+1
		if !(isNameStartRune(r) || (!first && isNameRune(r))) {
			if first {
				return 0, 0, 0, 0, p.errAt(i, "invalid name character "+strconv.QuoteRune(r))
			}
			break
		}
		i += n
	}
	if i-ps > p.lim.MaxNameBytes {
		return 0, 0, 0, 0, p.limitAt(ps, LimitNameBytes, p.lim.MaxNameBytes)
	}
	if i == ps {
		if i >= len(d) {
			return 0, 0, 0, 0, p.errAt(i, "unexpected end of document, expected a name")
		}
		return 0, 0, 0, 0, p.errAt(i, "expected a name, found "+strconv.QuoteRune(p.runeAt(i)))
	}
	if colon == ps || colon == i-1 {
		return 0, 0, 0, 0, p.errAt(ps, "invalid name "+strconv.Quote(string(d[ps:i])))
	}
	p.pos = i
	if colon < 0 {
		return ps, ps, ps, i, nil
	}
	return ps, colon, colon + 1, i, nil
}

func (p *parser) runeAt(i int) rune {
	r, _ := utf8.DecodeRune(p.data[i:])
	return r
}

// skipSpace skips whitespace and reports whether there was any.
func (p *parser) skipSpace() bool {
	i := p.pos
	for p.pos < len(p.data) && isSpace(p.data[p.pos]) {
		p.pos++
	}
	return p.pos > i
}

// startTag reads a start tag or empty-element tag at p.pos (on '<').
func (p *parser) startTag() error {
	d := p.data
	start := p.pos
	if len(p.stack) >= p.lim.MaxDepth {
		return p.limitAt(start, LimitDepth, p.lim.MaxDepth)
	}
	if len(p.stack) == 0 && p.doc.Root() != nil {
		return p.errAt(start, "more than one document element")
	}
	p.elements++
	if p.elements > p.lim.MaxElements {
		return p.limitAt(start, LimitElements, p.lim.MaxElements)
	}
	p.pos++
	ps, pe, ls, le, err := p.qname()
	if err != nil {
		return err
	}
	p.attrs = p.attrs[:0]
	p.nattr = 0
	empty := false
	for {
		sp := p.skipSpace()
		if p.pos >= len(d) {
			return p.errAt(p.pos, "unexpected end of document in a start tag")
		}
		c := d[p.pos]
		if c == '>' {
			p.pos++
			break
		}
		if c == '/' {
			if p.pos+1 >= len(d) || d[p.pos+1] != '>' {
				return p.errAt(p.pos, "expected /> in an empty-element tag")
			}
			p.pos += 2
			empty = true
			break
		}
		if !sp {
			return p.errAt(p.pos, "expected whitespace before an attribute")
		}
		if err := p.attr(); err != nil {
			return err
		}
	}
	mark := len(p.bindings)
	if err := p.declare(); err != nil {
		return err
	}
	prefix, local := p.name(ps, pe), p.name(ls, le)
	if pe > ps {
		if prefix == "xmlns" {
			return p.errAt(start, "element <"+prefix+":"+local+"> has the reserved prefix xmlns")
		}
		if _, ok := p.lookup(prefix); !ok {
			return p.errAt(start, "element <"+prefix+":"+local+">: prefix "+prefix+" is not bound to a namespace")
		}
	}
	if err := p.resolveAttrs(); err != nil {
		return err
	}
	e := p.newElement(prefix, local)
	if n := len(p.attrs); n > 0 {
		// Filled in place: CreateAttr links each attribute to e (which
		// Attr.NamespaceURI needs) but scans e.Attr for one to replace,
		// so it gets an empty window of the final slice each time.
		attrs := p.attrWindow(n)
		for i, a := range p.attrs {
			e.Attr = attrs[i:i]
			e.CreateAttr(a.local, a.value)
			attrs[i].Space = a.prefix
		}
		e.Attr = attrs
	}
	p.ws = p.ws[:0] // indentation before a child element
	p.add(e)
	p.stack = append(p.stack, frame{el: e, nsMark: mark, kidMark: len(p.kids), start: start})
	if empty {
		return p.closeTop()
	}
	return nil
}

// attr reads one attribute at p.pos into p.attrs.
func (p *parser) attr() error {
	d := p.data
	at := p.pos
	ps, pe, ls, le, err := p.qname()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.pos >= len(d) || d[p.pos] != '=' {
		return p.errAt(p.pos, "attribute "+string(d[ps:le])+" without a value")
	}
	p.pos++
	p.skipSpace()
	v, err := p.attrValue()
	if err != nil {
		return err
	}
	a := rawAttr{prefix: p.name(ps, pe), local: p.name(ls, le), value: v, pos: at}
	a.decl = a.prefix == "xmlns" || (pe == ps && a.local == "xmlns")
	if a.decl {
		if len(p.attrs)-p.nattr >= p.lim.MaxNSDecls {
			return p.limitAt(at, LimitNSDecls, p.lim.MaxNSDecls)
		}
	} else {
		if p.nattr >= p.lim.MaxAttrs {
			return p.limitAt(at, LimitAttrs, p.lim.MaxAttrs)
		}
		p.nattr++
	}
	if len(p.attrs) == cap(p.attrs) && len(p.attrs) >= 64 {
		// A long start tag: make room for the rest of it at once instead
		// of growing a quarter at a time.
		p.attrs = slices.Grow(p.attrs, p.countAttrs())
	}
	p.attrs = append(p.attrs, a)
	return nil
}

// countAttrs returns the number of '=' from p.pos to the end of the start
// tag (outside quoted values), at least 1: about the attributes still to
// come, bounded by the limits.
func (p *parser) countAttrs() int {
	d := p.data
	n, bound := 1, p.lim.MaxAttrs+p.lim.MaxNSDecls
	if bound < 0 { // both unlimited
		bound = len(d)
	}
	var q byte
	for i := p.pos; i < len(d) && n <= bound; i++ {
		switch c := d[i]; {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '=':
			n++
		case c == '>':
			return n
		}
	}
	return n
}

// declare checks the namespace declarations of the element being read and
// pushes their bindings.
func (p *parser) declare() error {
	mark := len(p.bindings)
	if n := len(p.attrs) - p.nattr; n > 1 {
		p.bindings = slices.Grow(p.bindings, n)
		if p.byPrefix == nil && mark+n > smallScope {
			p.indexBindings(mark + n)
		}
	}
	for _, a := range p.attrs {
		if !a.decl {
			continue
		}
		prefix := a.local
		if a.prefix == "" {
			prefix = "" // xmlns="..."
		}
		switch {
		case prefix == "xmlns":
			return p.errAt(a.pos, "the prefix xmlns must not be declared")
		case prefix == "xml" && a.value != nsXML:
			return p.errAt(a.pos, "the prefix xml must not be bound to "+strconv.Quote(a.value))
		case prefix != "xml" && a.value == nsXML:
			return p.errAt(a.pos, "only the prefix xml may be bound to "+nsXML)
		case a.value == nsXMLNS:
			return p.errAt(a.pos, "no prefix may be bound to "+nsXMLNS)
		case prefix != "" && a.value == "":
			return p.errAt(a.pos, "xmlns:"+prefix+" has an empty value (a prefix cannot be undeclared in XML 1.0)")
		}
		if i, ok := p.lookupIndex(prefix); ok && i >= mark {
			return p.errAt(a.pos, "namespace prefix "+strconv.Quote(prefix)+" declared twice")
		}
		p.bind(prefix, a.value)
	}
	return nil
}

// bind pushes a binding.
func (p *parser) bind(prefix, uri string) {
	prev, ok := p.lookupIndex(prefix)
	if !ok {
		prev = -1
	}
	p.bindings = append(p.bindings, binding{prefix: prefix, uri: uri, prev: prev})
	switch {
	case p.byPrefix != nil:
		p.byPrefix[prefix] = len(p.bindings) - 1
	case len(p.bindings) > smallScope:
		p.indexBindings(2 * len(p.bindings))
	}
}

// indexBindings starts the map from prefix to innermost binding, with room
// for n prefixes.
func (p *parser) indexBindings(n int) {
	p.byPrefix = make(map[string]int, n)
	for i, b := range p.bindings {
		p.byPrefix[b.prefix] = i
	}
}

// unbind pops the bindings above mark.
func (p *parser) unbind(mark int) {
	for i := len(p.bindings) - 1; i >= mark; i-- {
		b := p.bindings[i]
		if p.byPrefix != nil {
			if b.prev >= 0 {
				p.byPrefix[b.prefix] = b.prev
			} else {
				delete(p.byPrefix, b.prefix)
			}
		}
	}
	p.bindings = p.bindings[:mark]
}

// lookupIndex returns the index of the innermost binding of prefix.
func (p *parser) lookupIndex(prefix string) (int, bool) {
	if p.byPrefix != nil {
		i, ok := p.byPrefix[prefix]
		return i, ok
	}
	for i := len(p.bindings) - 1; i >= 0; i-- {
		if p.bindings[i].prefix == prefix {
			return i, true
		}
	}
	return 0, false
}

// lookup resolves prefix in the current scope.
func (p *parser) lookup(prefix string) (string, bool) {
	if prefix == "xml" {
		return nsXML, true
	}
	i, ok := p.lookupIndex(prefix)
	if !ok || (prefix == "" && p.bindings[i].uri == "") {
		return "", false
	}
	return p.bindings[i].uri, true
}

// resolveAttrs resolves the prefixes of p.attrs and rejects duplicates.
func (p *parser) resolveAttrs() error {
	for i := range p.attrs {
		a := &p.attrs[i]
		if a.prefix == "" || a.decl {
			continue
		}
		uri, ok := p.lookup(a.prefix)
		if !ok {
			return p.errAt(a.pos, "attribute "+a.prefix+":"+a.local+": prefix "+a.prefix+" is not bound to a namespace")
		}
		a.uri = uri
	}
	if p.nattr <= smallAttrs {
		for i := 1; i < len(p.attrs); i++ {
			if p.attrs[i].decl {
				continue
			}
			for j := range i {
				if !p.attrs[j].decl && p.attrs[i].local == p.attrs[j].local && p.attrs[i].uri == p.attrs[j].uri {
					return p.dupAttr(p.attrs[i])
				}
			}
		}
		return nil
	}
	if p.seen == nil {
		p.seen = make(map[attrKey]struct{}, p.nattr)
	}
	p.seenMax = max(p.seenMax, p.nattr)
	defer clear(p.seen)
	for _, a := range p.attrs {
		if a.decl {
			continue
		}
		k := attrKey{a.uri, a.local}
		if _, dup := p.seen[k]; dup {
			return p.dupAttr(a)
		}
		p.seen[k] = struct{}{}
	}
	return nil
}

func (p *parser) dupAttr(a rawAttr) error {
	name := a.local
	if a.prefix != "" {
		name = a.prefix + ":" + a.local
	}
	if a.uri != "" {
		return p.errAt(a.pos, "attribute "+name+" repeats attribute {"+a.uri+"}"+a.local)
	}
	return p.errAt(a.pos, "attribute "+name+" appears twice")
}

// endTag reads an end tag at p.pos (on "</").
func (p *parser) endTag() error {
	d := p.data
	start := p.pos
	p.pos += 2
	ps, pe, ls, le, err := p.qname()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.pos >= len(d) || d[p.pos] != '>' {
		return p.errAt(p.pos, "expected > to end the end tag </"+string(d[ps:le])+">")
	}
	p.pos++
	if len(p.stack) == 0 {
		return p.errAt(start, "unexpected end tag </"+string(d[ps:le])+">")
	}
	top := p.stack[len(p.stack)-1].el
	if top.Space != string(d[ps:pe]) || top.Tag != string(d[ls:le]) {
		return p.errAt(start, "element <"+top.FullTag()+"> closed by </"+string(d[ps:le])+">")
	}
	return p.closeTop()
}

// closeTop ends the innermost open element at p.pos.
func (p *parser) closeTop() error {
	f := p.stack[len(p.stack)-1]
	if len(p.kids) == f.kidMark {
		p.flushWS() // <a> </a> keeps its space
	}
	p.ws = p.ws[:0]
	if n := len(p.kids) - f.kidMark; n > 0 {
		// AddChild links each child to the element and appends it within
		// the window's capacity.
		f.el.Child = p.window(n)
		for _, k := range p.kids[f.kidMark:] {
			f.el.AddChild(k)
		}
		p.kids = p.kids[:f.kidMark] // cleared by reset
	}
	if p.end != nil {
		if err := p.end(f.el, len(p.stack), p.pos-f.start); err != nil {
			return err
		}
	}
	p.unbind(f.nsMark)
	p.stack = p.stack[:len(p.stack)-1]
	return nil
}

// procInst reads a processing instruction at p.pos (on "<?").
func (p *parser) procInst() error {
	d := p.data
	start := p.pos
	p.pos += 2
	ts := p.pos
	for p.pos < len(d) && !isSpace(d[p.pos]) && d[p.pos] != '?' {
		p.pos++
	}
	target := string(d[ts:p.pos])
	if target == "" {
		return p.errAt(start, "expected a target name after <?")
	}
	if len(target) > p.lim.MaxNameBytes {
		return p.limitAt(start, LimitNameBytes, p.lim.MaxNameBytes)
	}
	if strings.EqualFold(target, "xml") {
		return p.errAt(start, "XML declaration not at the start of the document")
	}
	if !isName(target) || strings.ContainsRune(target, ':') {
		return p.errAt(start, "invalid processing instruction target "+strconv.Quote(target))
	}
	if p.pos < len(d) && !isSpace(d[p.pos]) && !bytes.HasPrefix(d[p.pos:], []byte("?>")) {
		return p.errAt(p.pos, "expected whitespace after the processing instruction target")
	}
	p.skipSpace()
	is := p.pos
	end := bytes.Index(d[is:], []byte("?>"))
	if end < 0 {
		return p.errAt(len(d), "unterminated processing instruction")
	}
	if end > p.lim.MaxValueBytes {
		return p.limitAt(is, LimitValueBytes, p.lim.MaxValueBytes)
	}
	if err := p.checkChars(d[is:is+end], is); err != nil {
		return err
	}
	p.add(etree.NewProcInst(target, p.str(is, is+end)))
	p.pos = is + end + 2
	return nil
}

// bang reads a comment, CDATA section or DOCTYPE at p.pos (on "<!").
func (p *parser) bang() error {
	d := p.data
	start := p.pos
	rest := d[start:]
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		cs := start + 4
		end := bytes.Index(d[cs:], []byte("--"))
		if end < 0 {
			return p.errAt(len(d), "unterminated comment")
		}
		if cs+end+2 >= len(d) || d[cs+end+2] != '>' {
			return p.errAt(cs+end, `"--" not allowed in comments`)
		}
		if end > p.lim.MaxValueBytes {
			return p.limitAt(cs, LimitValueBytes, p.lim.MaxValueBytes)
		}
		if err := p.checkChars(d[cs:cs+end], cs); err != nil {
			return err
		}
		p.add(etree.NewComment(p.str(cs, cs+end)))
		p.pos = cs + end + 3
		return nil
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		if len(p.stack) == 0 {
			return p.errAt(start, "CDATA section outside the document element")
		}
		cs := start + 9
		end := bytes.Index(d[cs:], []byte("]]>"))
		if end < 0 {
			return p.errAt(len(d), "unterminated CDATA section")
		}
		if end > p.lim.MaxValueBytes {
			return p.limitAt(cs, LimitValueBytes, p.lim.MaxValueBytes)
		}
		raw := d[cs : cs+end]
		if err := p.checkChars(raw, cs); err != nil {
			return err
		}
		var t string
		if bytes.IndexByte(raw, '\r') >= 0 {
			t = string(normalizeCR(p.buf[:0], raw))
		} else {
			t = p.str(cs, cs+end)
		}
		p.pos = cs + end + 3
		p.charData(t)
		return nil
	case bytes.HasPrefix(rest, []byte("<!DOCTYPE")):
		return p.errAt(start, "DTD (DOCTYPE) not allowed")
	}
	return p.errAt(start, "invalid markup after <!")
}

// normalizeCR appends b to dst with "\r\n" and "\r" turned into "\n".
func normalizeCR(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\r' {
			c = '\n'
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// checkChars checks that b (at offset off) is UTF-8 of XML characters.
func (p *parser) checkChars(b []byte, off int) error {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return p.errAt(off+i, "illegal character code "+charCode(rune(c)))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if err := p.checkRune(r, n, off+i); err != nil {
			return err
		}
		i += n
	}
	return nil
}

// checkRune checks a decoded non-ASCII rune.
func (p *parser) checkRune(r rune, n, off int) error {
	if r == utf8.RuneError && n == 1 {
		return p.errAt(off, "invalid UTF-8")
	}
	if !isChar(r) {
		return p.errAt(off, "illegal character code "+charCode(r))
	}
	return nil
}

func charCode(r rune) string {
	return "U+" + strings.ToUpper(strconv.FormatInt(int64(r), 16))
}
