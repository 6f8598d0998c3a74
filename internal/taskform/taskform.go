package taskform

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xsd"
)

// Input is one field of the form.
type Input struct {
	// Name is the form field's name; Label what the page shows.
	Name, Label string
	// Type is the HTML input's: "text", "number", "checkbox", "date",
	// "datetime-local", "time", or "select" (Options), or "group" for
	// the heading of a complex element (no value).
	Type    string
	Options []string
	// Step is a number input's step ("1" for integers, "any").
	Step     string
	Required bool
	// Value is the current value (from the element given to Inputs).
	Value string
	// Depth is how deep the element is (0: the root's children).
	Depth int
}

// prefix starts every field name.
const prefix = "f."

// Inputs lists the fields of element f, with the values of cur (nil: a
// new element) filled in.
func Inputs(f *xsd.Field, cur *etree.Element) []Input {
	var out []Input
	if f.Kind != "" {
		return append(out, leaf(f, prefix+f.Name.Local, 0, cur, true))
	}
	walk(f, prefix+f.Name.Local, 0, cur, true, &out)
	return out
}

func walk(f *xsd.Field, path string, depth int, cur *etree.Element, required bool, out *[]Input) {
	for _, c := range f.Children {
		var els []*etree.Element
		if cur != nil {
			els = children(cur, c.Name)
		}
		for i := range occurrences(c, len(els)) {
			name, lbl := path+"."+c.Name.Local, label(c.Name.Local)
			if repeated(c) {
				name, lbl = fmt.Sprintf("%s#%d", name, i+1), fmt.Sprintf("%s %d", lbl, i+1)
			}
			var el *etree.Element
			if i < len(els) {
				el = els[i]
			}
			req := required && c.Min > i
			if c.Kind == "" && (len(c.Children) > 0 || c.Truncated) {
				*out = append(*out, Input{Name: name, Label: lbl, Type: "group", Depth: depth, Required: req})
				walk(c, name, depth+1, el, req, out)
				continue
			}
			in := leaf(c, name, depth, el, req)
			in.Label = lbl
			*out = append(*out, in)
		}
	}
}

// blanks is how many empty occurrences of a repeated element a form
// offers beyond those the current element has (or minOccurs).
const blanks = 3

// maxOccurrence bounds the occurrence index Parse reads.
const maxOccurrence = 200

// repeated reports whether f may occur more than once: its fields are
// then numbered ("f.order.line#2.sku"), one per occurrence.
func repeated(f *xsd.Field) bool { return f.Max != 1 && f.Max != 0 }

// occurrences is how many occurrences of f a form offers when the
// current element has have: those (at least f.Min) and blanks more, at
// most f.Max.
func occurrences(f *xsd.Field, have int) int {
	if !repeated(f) {
		return 1
	}
	n := max(have, f.Min) + blanks
	if f.Max > 0 {
		n = min(n, f.Max)
	}
	return n
}

func leaf(f *xsd.Field, name string, depth int, el *etree.Element, required bool) Input {
	in := Input{Name: name, Label: label(f.Name.Local), Depth: depth, Required: required && f.Kind != "boolean"}
	if el != nil {
		in.Value = strings.TrimSpace(el.Text())
	}
	switch {
	case len(f.Enum) > 0:
		in.Type, in.Options = "select", f.Enum
	case f.Kind == "boolean":
		in.Type = "checkbox"
	case f.Kind == "integer":
		in.Type, in.Step = "number", "1"
	case f.Kind == "decimal" || f.Kind == "float" || f.Kind == "double":
		in.Type, in.Step = "number", "any"
	case f.Kind == "date":
		in.Type = "date"
	default:
		in.Type = "text"
	}
	return in
}

// label turns a local name into words: "approvedAmount" -> "Approved amount".
func label(local string) string {
	var b strings.Builder
	for i, r := range local {
		switch {
		case i == 0:
			b.WriteString(strings.ToUpper(string(r)))
		case r >= 'A' && r <= 'Z':
			b.WriteByte(' ')
			b.WriteString(strings.ToLower(string(r)))
		case r == '_' || r == '-':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func children(el *etree.Element, q xsd.QName) []*etree.Element {
	var out []*etree.Element
	for _, c := range el.ChildElements() {
		if c.Tag == q.Local && c.NamespaceURI() == q.Space {
			out = append(out, c)
		}
	}
	return out
}

// ErrMissing is the error of a required field left empty.
var ErrMissing = errors.New("required field is empty")

// maxValue bounds one submitted value.
const maxValue = 64 << 10

// Parse builds element f from the submitted form: a field left empty
// omits its optional element (an error for a required one), a checkbox
// not sent is false. The element's namespaces are declared on it.
func Parse(f *xsd.Field, form url.Values) (*etree.Element, error) {
	ns := map[string]string{}
	root := newElement(f.Name, ns)
	if f.Kind != "" {
		v, err := value(f, prefix+f.Name.Local, form, true)
		if err != nil {
			return nil, err
		}
		root.SetText(v)
	} else if _, err := fill(root, f, prefix+f.Name.Local, form, true, ns); err != nil {
		return nil, err
	}
	for space, p := range ns {
		root.CreateAttr("xmlns:"+p, space)
	}
	return root, nil
}

// fill adds f's children to el; some reports whether any was given.
func fill(el *etree.Element, f *xsd.Field, path string, form url.Values, required bool, ns map[string]string) (some bool, err error) {
	for _, c := range f.Children {
		base := path + "." + c.Name.Local
		n := 1
		if repeated(c) {
			n = max(c.Min, lastOccurrence(form, base))
			if c.Max > 0 {
				n = min(n, c.Max)
			}
		}
		for i := range n {
			name := base
			if repeated(c) {
				name = fmt.Sprintf("%s#%d", base, i+1)
			}
			req := required && c.Min > i && !f.Choice
			if c.Kind == "" {
				k := newElement(c.Name, ns)
				got, err := fill(k, c, name, form, req, ns)
				if err != nil {
					return false, err
				}
				if got || req {
					el.AddChild(k)
					some = true
				}
				continue
			}
			v, err := value(c, name, form, req)
			if err != nil {
				return false, err
			}
			if v == "" && !req {
				continue
			}
			k := newElement(c.Name, ns)
			k.SetText(v)
			el.AddChild(k)
			some = true
		}
	}
	return some, nil
}

// lastOccurrence is the highest occurrence number of the repeated
// element whose fields start with base ("base#N" or "base#N.child") in
// form, at most maxOccurrence; 0 when none.
func lastOccurrence(form url.Values, base string) int {
	last := 0
	for k := range form {
		rest, ok := strings.CutPrefix(k, base+"#")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if n, err := strconv.Atoi(num); err == nil && n > last && n <= maxOccurrence {
			last = n
		}
	}
	return last
}

// value is field name's submitted value, checked for presence.
func value(f *xsd.Field, name string, form url.Values, required bool) (string, error) {
	v := strings.TrimSpace(form.Get(name))
	if len(v) > maxValue {
		return "", fmt.Errorf("%s: the value is longer than %d bytes", label(f.Name.Local), maxValue)
	}
	if f.Kind == "boolean" {
		switch {
		case v != "" && v != "false":
			return "true", nil
		case required:
			return "false", nil // an unchecked box is not sent
		}
		return "", nil
	}
	if v == "" && required {
		return "", fmt.Errorf("%s: %w", label(f.Name.Local), ErrMissing)
	}
	if !xmlText(v) {
		return "", fmt.Errorf("%s: the value has characters XML cannot hold", label(f.Name.Local))
	}
	return v, nil
}

// newElement makes an element named q, its namespace bound to a prefix
// of ns (ns0, ns1, ...) declared on the root.
func newElement(q xsd.QName, ns map[string]string) *etree.Element {
	if q.Space == "" {
		return etree.NewElement(q.Local)
	}
	p, ok := ns[q.Space]
	if !ok {
		p = fmt.Sprintf("ns%d", len(ns))
		ns[q.Space] = p
	}
	return etree.NewElement(p + ":" + q.Local)
}

// xmlText reports whether s is UTF-8 made only of XML 1.0 characters.
func xmlText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF) {
			return false
		}
	}
	return true
}
