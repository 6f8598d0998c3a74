package xmlparse

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Byte classes for text and attribute values.
const (
	plain   = iota // copied as is
	special        // needs a closer look: & < ] \r " ' or a non-ASCII byte
	illegal        // a control character XML does not allow
)

// textClass classifies the bytes of character data and attribute values.
var textClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			t[c] = special
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			t[c] = illegal
		}
	}
	for _, c := range []byte("&<]\r\"'") {
		t[c] = special
	}
	return t
}()

// nameByte classifies ASCII bytes in names: 1 may start a name (or a name
// part after the colon), 2 may only follow, 0 ends the name.
var nameByte = func() (t [utf8.RuneSelf]byte) {
	for c := range utf8.RuneSelf {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
			t[c] = 1
		case c >= '0' && c <= '9', c == '-', c == '.':
			t[c] = 2
		}
	}
	return t
}()

// text reads character data from p.pos up to the next '<' or the end of
// the document, decoding references and normalizing line ends.
func (p *parser) text() (string, error) {
	d := p.data
	start := p.pos
	i := start
scan:
	for i < len(d) {
		c := d[i]
		switch textClass[c] {
		case plain:
			i++
			continue
		case illegal:
			return "", p.errAt(i, "illegal character code "+charCode(rune(c)))
		}
		switch {
		case c == '"' || c == '\'':
			i++
			continue
		case c == ']':
			if bytes.HasPrefix(d[i:], []byte("]]>")) {
				return "", p.errAt(i, `"]]>" not allowed in text`)
			}
			i++
			continue
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d[i:])
			if err := p.checkRune(r, n, i); err != nil {
				return "", err
			}
			i += n
			continue
		}
		break scan // '<', '&' or '\r'
	}
	if i >= len(d) || d[i] == '<' {
		if i-start > p.lim.MaxValueBytes {
			return "", p.limitAt(start, LimitValueBytes, p.lim.MaxValueBytes)
		}
		p.pos = i
		return p.str(start, i), nil
	}
	p.pos = i
	buf, err := p.decode(append(p.buf[:0], d[start:i]...), start, '<')
	if err != nil {
		return "", err
	}
	p.buf = buf
	return string(buf), nil
}

// attrValue reads a quoted attribute value at p.pos.
func (p *parser) attrValue() (string, error) {
	d := p.data
	if p.pos >= len(d) || (d[p.pos] != '"' && d[p.pos] != '\'') {
		return "", p.errAt(p.pos, "unquoted or missing attribute value")
	}
	q := d[p.pos]
	p.pos++
	start := p.pos
	i := start
	for i < len(d) {
		c := d[i]
		if textClass[c] == plain || c == ']' || (c != q && (c == '"' || c == '\'')) {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(d[i:])
			if err := p.checkRune(r, n, i); err != nil {
				return "", err
			}
			i += n
			continue
		}
		break
	}
	if i < len(d) && d[i] == q {
		if i-start > p.lim.MaxValueBytes {
			return "", p.limitAt(start, LimitValueBytes, p.lim.MaxValueBytes)
		}
		p.pos = i + 1
		return p.str(start, i), nil
	}
	p.pos = i
	buf, err := p.decode(append(p.buf[:0], d[start:i]...), start, q)
	if err != nil {
		return "", err
	}
	p.buf = buf
	p.pos++ // the closing quote
	return string(buf), nil
}

// decode continues reading text (stop '<') or an attribute value (stop is
// its quote) from p.pos, appending to buf, until stop or, for text, the end
// of the document. It leaves p.pos on stop.
func (p *parser) decode(buf []byte, start int, stop byte) ([]byte, error) {
	d := p.data
	attr := stop != '<'
	i := p.pos
	for {
		if i-start > p.lim.MaxValueBytes {
			return nil, p.limitAt(start, LimitValueBytes, p.lim.MaxValueBytes)
		}
		if i >= len(d) {
			if attr {
				return nil, p.errAt(i, "unexpected end of document in an attribute value")
			}
			break
		}
		c := d[i]
		if c == stop {
			break
		}
		switch {
		case textClass[c] == plain, c == '"', c == '\'':
			j := i + 1
			for j < len(d) && textClass[d[j]] == plain {
				j++
			}
			buf = append(buf, d[i:j]...)
			i = j
		case textClass[c] == illegal:
			return nil, p.errAt(i, "illegal character code "+charCode(rune(c)))
		case c == '<':
			return nil, p.errAt(i, "unescaped < in an attribute value")
		case c == ']':
			if !attr && bytes.HasPrefix(d[i:], []byte("]]>")) {
				return nil, p.errAt(i, `"]]>" not allowed in text`)
			}
			buf = append(buf, c)
			i++
		case c == '\r':
			buf = append(buf, '\n')
			i++
			if i < len(d) && d[i] == '\n' {
				i++
			}
		case c == '&':
			r, n, err := p.ref(i)
			if err != nil {
				return nil, err
			}
			buf = utf8.AppendRune(buf, r)
			i += n
		default: // non-ASCII
			r, n := utf8.DecodeRune(d[i:])
			if err := p.checkRune(r, n, i); err != nil {
				return nil, err
			}
			buf = append(buf, d[i:i+n]...)
			i += n
		}
	}
	p.pos = i
	return buf, nil
}

// ref decodes the entity or character reference at d[i] ('&'), returning
// the character and the reference's length.
func (p *parser) ref(i int) (rune, int, error) {
	d := p.data
	end := bytes.IndexByte(d[i:min(len(d), i+16)], ';')
	if end < 2 {
		return 0, 0, p.errAt(i, "invalid character entity "+clip(d[i:], 16)+" (& must be written &amp;)")
	}
	name := d[i+1 : i+end]
	if name[0] != '#' {
		switch string(name) {
		case "lt":
			return '<', end + 1, nil
		case "gt":
			return '>', end + 1, nil
		case "amp":
			return '&', end + 1, nil
		case "apos":
			return '\'', end + 1, nil
		case "quot":
			return '"', end + 1, nil
		}
		return 0, 0, p.errAt(i, "undefined entity &"+string(name)+"; (only &lt; &gt; &amp; &apos; &quot; and character references)")
	}
	digits, base := name[1:], 10
	if len(digits) > 0 && digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 || len(digits) > 8 {
		return 0, 0, p.errAt(i, "invalid character reference &"+string(name)+";")
	}
	var r rune
	for _, c := range digits {
		var v rune
		switch {
		case c >= '0' && c <= '9':
			v = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			v = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			v = rune(c-'A') + 10
		default:
			return 0, 0, p.errAt(i, "invalid character reference &"+string(name)+";")
		}
		r = r*rune(base) + v
	}
	if !isChar(r) {
		return 0, 0, p.errAt(i, "character reference &"+string(name)+"; is not an XML character")
	}
	return r, end + 1, nil
}

// clip returns up to n bytes of b as a string.
func clip(b []byte, n int) string {
	return string(b[:min(len(b), n)])
}

// isChar reports whether r is an XML 1.0 Char.
func isChar(r rune) bool {
	switch {
	case r < 0x20:
		return r == '\t' || r == '\n' || r == '\r'
	case r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// isNameStartRune reports whether the non-ASCII r may start a name (XML
// 1.0 fifth edition).
func isNameStartRune(r rune) bool {
	switch {
	case r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF,
		r >= 0x370 && r <= 0x37D, r >= 0x37F && r <= 0x1FFF, r >= 0x200C && r <= 0x200D,
		r >= 0x2070 && r <= 0x218F, r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

// isNameRune reports whether the non-ASCII r may appear in a name after
// its first character.
func isNameRune(r rune) bool {
	return isNameStartRune(r) || r == 0xB7 || (r >= 0x300 && r <= 0x36F) || (r >= 0x203F && r <= 0x2040)
}

// isName reports whether s is an XML name.
func isName(s string) bool {
	for i, r := range s {
		if r < utf8.RuneSelf {
			if nameByte[r] == 0 || (i == 0 && nameByte[r] != 1) {
				return false
			}
			continue
		}
		if r == utf8.RuneError || !(isNameStartRune(r) || (i > 0 && isNameRune(r))) {
			return false
		}
	}
	return s != ""
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isAllSpace reports whether s is empty after trimming white space (as
// bytes.TrimSpace and the previous parser saw it).
func isAllSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '\v', c == '\f':
		case c >= utf8.RuneSelf:
			return strings.TrimSpace(s[i:]) == ""
		default:
			return false
		}
	}
	return true
}
