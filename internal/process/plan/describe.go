package plan

import (
	"fmt"
	"strings"
)

// Describe names the activity for run-time errors: `<assign
// name="copy">`, or `<assign>` when it has no name.
func (b *Base) Describe() string {
	tag := b.Tag
	if tag == "" {
		tag = "activity"
	}
	if b.Name == "" {
		return "<" + tag + ">"
	}
	return fmt.Sprintf("<%s name=%q>", tag, b.Name)
}

// Describe says what a <from> reads, for a selectionFailure: the
// expression as written and the variables it reads, e.g.
// `$in.payload/tns:item (reads variable in)`.
func (f *FromSpec) Describe() string {
	switch {
	case f.V != nil:
		s := "variable " + f.V.Name
		if f.Part >= 0 && f.V.Msg != nil && f.Part < len(f.V.Msg.Parts) {
			s += ", part " + f.V.Msg.Parts[f.Part].Name
		}
		if f.Query != nil {
			s += fmt.Sprintf(", query %q", f.Query.Src)
		}
		return s
	case f.X != nil:
		s := fmt.Sprintf("expression %q", f.X.Src)
		switch vars := ExprVars(f.X.Src); len(vars) {
		case 0:
			return s + " (reads no variable)"
		case 1:
			return s + " (reads variable " + vars[0] + ")"
		default:
			return s + " (reads variables " + strings.Join(vars, ", ") + ")"
		}
	}
	return "<from>"
}

// ExprVars lists, in order and once each, the variables an XPath
// expression src names ($name, $name.part), skipping string literals.
func ExprVars(src string) []string {
	var vars []string
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '$':
			j := i + 1
			for j < len(src) && isNameChar(src[j]) {
				j++
			}
			if name := src[i+1 : j]; name != "" && !containsString(vars, name) {
				vars = append(vars, name)
			}
			i = j - 1
		}
	}
	return vars
}

// isNameChar: an NCName character (ASCII; a '.' ends a BPEL variable
// name before its part, a ':' a prefix).
func isNameChar(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
