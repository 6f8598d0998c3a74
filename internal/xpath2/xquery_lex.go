package xpath2

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// An XQuery direct constructor (<a b="{1}">text{2}<c/></a>, <!--c-->,
// <?t x?>) is scanned whole by the lexer into a dirNode: its markup is not
// made of expression tokens. Enclosed expressions inside it are lexed
// recursively into token lists the parser parses in the constructor's
// namespace scope.

// dirNode is a scanned direct constructor.
type dirNode struct {
	kind    NodeKind // ElementNode, CommentNode or PINode
	pos     int
	name    string // element QName or PI target
	attrs   []dirAttr
	content []dirPart
	text    string // comment or PI content
}

// dirAttr is an attribute of a direct element constructor.
type dirAttr struct {
	name  string
	pos   int
	parts []dirPart
}

// dirPart is a piece of element content or of an attribute value: text,
// an enclosed expression (toks) or a nested constructor.
type dirPart struct {
	text string
	toks []token
	node *dirNode
	// keep marks text holding a character or entity reference or a CDATA
	// section: it is never boundary whitespace.
	keep bool
	pos  int
}

// keywords after which an operand, not an operator, comes: a '<' after
// them starts a direct constructor.
var operandAfter = map[string]bool{
	"return": true, "then": true, "else": true, "in": true, "satisfies": true, "and": true, "or": true,
	"div": true, "idiv": true, "mod": true, "eq": true, "ne": true, "lt": true, "le": true, "gt": true,
	"ge": true, "is": true, "to": true, "union": true, "intersect": true, "except": true, "where": true,
	"by": true,
}

// operandNext reports whether the next token is in operand position (so
// that '<' starts a direct constructor rather than comparing).
func operandNext(toks []token) bool {
	if len(toks) == 0 {
		return true
	}
	t := toks[len(toks)-1]
	switch t.kind {
	case tkString, tkInt, tkDec, tkDbl, tkDir:
		return false
	case tkName:
		return operandAfter[t.val]
	}
	switch t.val {
	case ")", "]", ".", "..", "}", "*", "?":
		return false
	}
	return true
}

// startsDirect reports whether s (what follows a '<') starts a direct
// constructor.
func startsDirect(s string) bool {
	if strings.HasPrefix(s, "!--") || strings.HasPrefix(s, "?") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return isNameStart(r)
}

// scanName scans a QName at src[i:] and returns its end.
func scanName(src string, i int) int {
	j := i
	for j < len(src) {
		r, n := utf8.DecodeRuneInString(src[j:])
		if !isNameChar(r) && !(r == ':' && j > i) {
			break
		}
		if j == i && !isNameStart(r) {
			break
		}
		j += n
	}
	return j
}

func skipSpace(src string, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}

var predefinedEntities = map[string]string{"lt": "<", "gt": ">", "amp": "&", "quot": `"`, "apos": "'"}

// scanRef decodes the character or entity reference at src[i:] (src[i] is
// '&') and returns its text and length.
func scanRef(src string, i int) (string, int, error) {
	end := strings.IndexByte(src[i:], ';')
	if end < 0 {
		return "", 0, syntaxErr(i, "unterminated character or entity reference")
	}
	ref := src[i+1 : i+end]
	if s, ok := predefinedEntities[ref]; ok {
		return s, end + 1, nil
	}
	if strings.HasPrefix(ref, "#") {
		var cp uint64
		var err error
		if strings.HasPrefix(ref, "#x") {
			cp, err = strconv.ParseUint(ref[2:], 16, 32)
		} else {
			cp, err = strconv.ParseUint(ref[1:], 10, 32)
		}
		if err == nil && isXMLChar(int64(cp)) {
			return string(rune(cp)), end + 1, nil
		}
		return "", 0, errf("XQST0090", "at offset %d: &%s; is not a valid XML character", i, ref)
	}
	return "", 0, syntaxErr(i, "unknown entity reference &%s;", ref)
}

// scanDirect scans the direct constructor at src[i:] (src[i] is '<') and
// returns it and the index after it.
func scanDirect(src string, i, nest int) (*dirNode, int, error) {
	if nest > MaxNesting {
		return nil, 0, syntaxErr(i, "expression nested deeper than the limit of %d levels", MaxNesting)
	}
	switch {
	case strings.HasPrefix(src[i:], "<!--"):
		end := strings.Index(src[i+4:], "-->")
		if end < 0 {
			return nil, 0, syntaxErr(i, "unterminated comment constructor")
		}
		text := src[i+4 : i+4+end]
		if strings.Contains(text, "--") || strings.HasSuffix(text, "-") {
			return nil, 0, syntaxErr(i, "'--' in a comment constructor")
		}
		return &dirNode{kind: CommentNode, pos: i, text: text}, i + 4 + end + 3, nil
	case strings.HasPrefix(src[i:], "<?"):
		j := scanName(src, i+2)
		target := src[i+2 : j]
		if target == "" || strings.Contains(target, ":") || strings.EqualFold(target, "xml") {
			return nil, 0, syntaxErr(i, "bad processing-instruction target %q", target)
		}
		end := strings.Index(src[j:], "?>")
		if end < 0 {
			return nil, 0, syntaxErr(i, "unterminated processing-instruction constructor")
		}
		text := src[j : j+end]
		if text != "" && skipSpace(text, 0) == 0 {
			return nil, 0, syntaxErr(j, "expected whitespace after the processing-instruction target")
		}
		return &dirNode{kind: PINode, pos: i, name: target, text: strings.TrimLeft(text, " \t\r\n")}, j + end + 2, nil
	}
	return scanElement(src, i, nest)
}

func scanElement(src string, i, nest int) (*dirNode, int, error) {
	d := &dirNode{kind: ElementNode, pos: i}
	j := scanName(src, i+1)
	d.name = src[i+1 : j]
	for {
		k := skipSpace(src, j)
		if k >= len(src) {
			return nil, 0, syntaxErr(i, "unterminated start tag <%s", d.name)
		}
		if strings.HasPrefix(src[k:], "/>") {
			return d, k + 2, nil
		}
		if src[k] == '>' {
			j = k + 1
			break
		}
		if k == j {
			return nil, 0, syntaxErr(k, "expected whitespace, '>' or '/>' in start tag <%s", d.name)
		}
		e := scanName(src, k)
		if e == k {
			return nil, 0, syntaxErr(k, "expected an attribute name in start tag <%s", d.name)
		}
		a := dirAttr{name: src[k:e], pos: k}
		e = skipSpace(src, e)
		if e >= len(src) || src[e] != '=' {
			return nil, 0, syntaxErr(e, "expected '=' after attribute %s", a.name)
		}
		e = skipSpace(src, e+1)
		if e >= len(src) || (src[e] != '"' && src[e] != '\'') {
			return nil, 0, syntaxErr(e, "expected a quoted value for attribute %s", a.name)
		}
		parts, end, err := scanAttrValue(src, e, nest)
		if err != nil {
			return nil, 0, err
		}
		a.parts = parts
		d.attrs = append(d.attrs, a)
		j = end
	}
	// content
	var text strings.Builder
	keep := false
	textPos := j
	flush := func() {
		if text.Len() > 0 {
			d.content = append(d.content, dirPart{text: text.String(), keep: keep, pos: textPos})
		}
		text.Reset()
		keep = false
	}
	for {
		if j >= len(src) {
			return nil, 0, syntaxErr(i, "element <%s> is not closed", d.name)
		}
		c := src[j]
		switch {
		case strings.HasPrefix(src[j:], "</"):
			flush()
			e := scanName(src, j+2)
			if src[j+2:e] != d.name {
				return nil, 0, syntaxErr(j, "end tag </%s> does not match start tag <%s>", src[j+2:e], d.name)
			}
			e = skipSpace(src, e)
			if e >= len(src) || src[e] != '>' {
				return nil, 0, syntaxErr(e, "expected '>' closing end tag </%s", d.name)
			}
			return d, e + 1, nil
		case strings.HasPrefix(src[j:], "<![CDATA["):
			end := strings.Index(src[j+9:], "]]>")
			if end < 0 {
				return nil, 0, syntaxErr(j, "unterminated CDATA section")
			}
			if text.Len() == 0 {
				textPos = j
			}
			text.WriteString(src[j+9 : j+9+end])
			keep = true
			j += 9 + end + 3
		case c == '<':
			flush()
			n, e, err := scanDirect(src, j, nest+1)
			if err != nil {
				return nil, 0, err
			}
			d.content = append(d.content, dirPart{node: n, pos: j})
			j = e
			textPos = j
		case strings.HasPrefix(src[j:], "{{"), strings.HasPrefix(src[j:], "}}"):
			text.WriteByte(c)
			j += 2
		case c == '{':
			flush()
			toks, e, err := lexFrom(src, j+1, true, true, nest+1)
			if err != nil {
				return nil, 0, err
			}
			d.content = append(d.content, dirPart{toks: toks, pos: j})
			j = e
			textPos = j
		case c == '}':
			return nil, 0, syntaxErr(j, "'}' in element content must be written '}}'")
		case c == '&':
			r, n, err := scanRef(src, j)
			if err != nil {
				return nil, 0, err
			}
			text.WriteString(r)
			keep = true
			j += n
		default:
			text.WriteByte(c)
			j++
		}
	}
}

// scanAttrValue scans the quoted attribute value at src[i:].
func scanAttrValue(src string, i, nest int) ([]dirPart, int, error) {
	q := src[i]
	var parts []dirPart
	var text strings.Builder
	j := i + 1
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, dirPart{text: text.String(), pos: j})
		}
		text.Reset()
	}
	for {
		if j >= len(src) {
			return nil, 0, syntaxErr(i, "unterminated attribute value")
		}
		c := src[j]
		switch {
		case c == q:
			if j+1 < len(src) && src[j+1] == q {
				text.WriteByte(q)
				j += 2
				continue
			}
			flush()
			if parts == nil {
				parts = []dirPart{}
			}
			return parts, j + 1, nil
		case strings.HasPrefix(src[j:], "{{"), strings.HasPrefix(src[j:], "}}"):
			text.WriteByte(c)
			j += 2
		case c == '{':
			flush()
			toks, e, err := lexFrom(src, j+1, true, true, nest+1)
			if err != nil {
				return nil, 0, err
			}
			parts = append(parts, dirPart{toks: toks, pos: j})
			j = e
		case c == '}':
			return nil, 0, syntaxErr(j, "'}' in an attribute value must be written '}}'")
		case c == '<':
			return nil, 0, syntaxErr(j, "'<' in an attribute value")
		case c == '&':
			r, n, err := scanRef(src, j)
			if err != nil {
				return nil, 0, err
			}
			text.WriteString(r)
			j += n
		case c == '\t' || c == '\n' || c == '\r':
			text.WriteByte(' ')
			j++
		default:
			text.WriteByte(c)
			j++
		}
	}
}
