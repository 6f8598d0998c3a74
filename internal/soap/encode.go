package soap

import (
	"unicode/utf8"

	"github.com/beevik/etree"
)

// writeElement serializes e as etree's WriteTo does with writeSettings,
// byte for byte, but without building a string per name (etree's FullTag
// and FullKey) and escaping ASCII text a run at a time.
func writeElement(w etree.Writer, e *etree.Element) {
	w.WriteByte('<')
	writeName(w, e.Space, e.Tag)
	for i := range e.Attr {
		a := &e.Attr[i]
		w.WriteByte(' ')
		writeName(w, a.Space, a.Key)
		w.WriteString(`="`)
		writeEscaped(w, a.Value, &attrEscapes)
		w.WriteByte('"')
	}
	if len(e.Child) == 0 {
		w.WriteString("/>")
		return
	}
	w.WriteByte('>')
	for _, c := range e.Child {
		switch t := c.(type) {
		case *etree.Element:
			writeElement(w, t)
		case *etree.CharData:
			if t.IsCData() {
				t.WriteTo(w, &writeSettings)
			} else {
				writeEscaped(w, t.Data, &textEscapes)
			}
		default:
			c.WriteTo(w, &writeSettings)
		}
	}
	w.WriteString("</")
	writeName(w, e.Space, e.Tag)
	w.WriteByte('>')
}

// writeName writes prefix:local, or local when prefix is empty.
func writeName(w etree.Writer, prefix, local string) {
	if prefix != "" {
		w.WriteString(prefix)
		w.WriteByte(':')
	}
	w.WriteString(local)
}

// textEscapes holds the escape of each ASCII byte in text, "\uFFFD" for
// control characters XML does not allow, and "" for bytes written as they
// are: xmlparse.WriteSettings' choices, so a carriage return survives the
// partner's line-end normalization.
var textEscapes = func() (t [utf8.RuneSelf]string) {
	for c := range 0x20 {
		if c != '\t' && c != '\n' && c != '\r' {
			t[c] = "\uFFFD"
		}
	}
	t['&'] = "&amp;"
	t['<'] = "&lt;"
	t['>'] = "&gt;"
	t['\r'] = "&#xD;"
	return t
}()

// attrEscapes holds the escapes in a double-quoted attribute value: a tab
// or line feed too, as a raw one reads back as a space.
var attrEscapes = func() (t [utf8.RuneSelf]string) {
	t = textEscapes
	t['>'] = ""
	t['"'] = "&quot;"
	t['\t'] = "&#x9;"
	t['\n'] = "&#xA;"
	return t
}()

// writeEscaped writes s escaped by the table escapes (textEscapes or
// attrEscapes): invalid UTF-8 and characters XML does not allow as U+FFFD.
func writeEscaped(w etree.Writer, s string, escapes *[utf8.RuneSelf]string) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if escapes[c] == "" {
				i++
				continue
			}
			w.WriteString(s[last:i])
			w.WriteString(escapes[c])
			i++
			last = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !xmlChar(r) {
			w.WriteString(s[last:i])
			w.WriteString("\uFFFD")
			last = i + n
		}
		i += n
	}
	w.WriteString(s[last:])
}

// xmlChar reports whether the non-ASCII r is an XML character.
func xmlChar(r rune) bool {
	return r <= 0xD7FF || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}
