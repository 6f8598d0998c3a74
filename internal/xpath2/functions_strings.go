package xpath2

import (
	"math"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

func registerStrings(fn func(string, int, int, FuncImpl)) {
	fn("codepoints-to-string", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		var b strings.Builder
		for _, it := range args[0] {
			a := atomizeItem(it)
			if a.Type() == TUntypedAtomic {
				v, err := castAtomic(a, TInteger, nil)
				if err != nil {
					return nil, err
				}
				a = v
			}
			i, ok := a.(Integer)
			if !ok {
				return nil, errf("XPTY0004", "codepoints-to-string of %s", a.Type())
			}
			cp := i.V.Int64()
			if !i.V.IsInt64() || !isXMLChar(cp) {
				return nil, errf("FOCH0001", "%s is not a valid XML character", i.V)
			}
			b.WriteRune(rune(cp))
			if err := c.strBytes(b.Len()); err != nil {
				return nil, err
			}
		}
		return strSeq(b.String())
	})
	fn("string-to-codepoints", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		var out Sequence
		if err := c.c.items(utf8.RuneCountInString(s)); err != nil {
			return nil, err
		}
		for _, r := range s {
			out = append(out, Int(int64(r)))
		}
		return out, nil
	})
	fn("compare", 2, 3, func(c Context, args []Sequence) (Sequence, error) {
		if len(args) == 3 {
			if err := argCollation(c, args[2]); err != nil {
				return nil, err
			}
		}
		if len(args[0]) == 0 || len(args[1]) == 0 {
			return nil, nil
		}
		a, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		b, err := argString(args[1])
		if err != nil {
			return nil, err
		}
		return intSeq(int64(strings.Compare(a, b)))
	})
	fn("codepoint-equal", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) == 0 || len(args[1]) == 0 {
			return nil, nil
		}
		a, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		b, err := argString(args[1])
		if err != nil {
			return nil, err
		}
		return boolSeq(a == b)
	})
	fn("concat", 2, -1, func(c Context, args []Sequence) (Sequence, error) {
		strs := make([]string, 0, len(args))
		n := 0
		for _, s := range args {
			a, err := atomizeOpt(s)
			if err != nil {
				return nil, err
			}
			if a != nil {
				strs = append(strs, a.String())
				n += len(strs[len(strs)-1])
			}
		}
		if err := c.strBytes(n); err != nil {
			return nil, err
		}
		return strSeq(strings.Join(strs, ""))
	})
	fn("string-join", 2, 2, func(c Context, args []Sequence) (Sequence, error) {
		sep, err := argString(args[1])
		if err != nil {
			return nil, err
		}
		if len(args[1]) == 0 {
			return nil, errf("XPTY0004", "string-join separator must not be empty sequence")
		}
		parts := make([]string, 0, len(args[0]))
		n := 0
		for _, it := range args[0] {
			a := atomizeItem(it)
			if !isStringLike(a.Type()) {
				return nil, errf("XPTY0004", "string-join of %s", a.Type())
			}
			parts = append(parts, a.String())
			n += len(parts[len(parts)-1]) + len(sep)
		}
		if err := c.strBytes(n - len(sep)); err != nil {
			return nil, err
		}
		return strSeq(strings.Join(parts, sep))
	})
	fn("substring", 2, 3, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		start, end, err := positionWindow("substring", args)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		i := 1.0
		for _, r := range s {
			if i >= start && i < end {
				b.WriteRune(r)
			}
			i++
		}
		return strSeq(b.String())
	})
	fn("string-length", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := ctxString(c, args)
		if err != nil {
			return nil, err
		}
		return intSeq(int64(utf8.RuneCountInString(s)))
	})
	fn("normalize-space", 0, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := ctxString(c, args)
		if err != nil {
			return nil, err
		}
		return strSeq(collapse(s))
	})
	fn("normalize-unicode", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		form := "NFC"
		if len(args) == 2 {
			f, err := argString(args[1])
			if err != nil {
				return nil, err
			}
			form = strings.ToUpper(strings.TrimSpace(f))
		}
		switch form {
		case "NFC":
			return strSeq(norm.NFC.String(s))
		case "NFD":
			return strSeq(norm.NFD.String(s))
		case "NFKC":
			return strSeq(norm.NFKC.String(s))
		case "NFKD":
			return strSeq(norm.NFKD.String(s))
		case "":
			return strSeq(s)
		}
		return nil, errf("FOCH0003", "unsupported normalization form %q", form)
	})
	fn("upper-case", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(cases.Upper(language.Und).String(s))
	})
	fn("lower-case", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(cases.Lower(language.Und).String(s))
	})
	fn("translate", 3, 3, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		from, err := argStringReq(args[1])
		if err != nil {
			return nil, err
		}
		to, err := argStringReq(args[2])
		if err != nil {
			return nil, err
		}
		fr, tr := []rune(from), []rune(to)
		m := map[rune]rune{}
		for i, r := range fr {
			if _, seen := m[r]; seen {
				continue
			}
			if i < len(tr) {
				m[r] = tr[i]
			} else {
				m[r] = -1
			}
		}
		return strSeq(strings.Map(func(r rune) rune {
			if t, ok := m[r]; ok {
				return t
			}
			return r
		}, s))
	})
	fn("encode-for-uri", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(percentEncode(s, func(b byte) bool {
			return isAlnum(b) || strings.IndexByte("-_.~", b) >= 0
		}))
	})
	fn("iri-to-uri", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(percentEncode(s, func(b byte) bool { return b > 0x20 && b < 0x7f && strings.IndexByte("<>\"{}|\\^`", b) < 0 }))
	})
	fn("escape-html-uri", 1, 1, func(c Context, args []Sequence) (Sequence, error) {
		s, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		return strSeq(percentEncode(s, func(b byte) bool { return b >= 0x20 && b < 0x7f }))
	})
	strPred := func(name string, f func(a, b string) bool) {
		fn(name, 2, 3, func(c Context, args []Sequence) (Sequence, error) {
			if len(args) == 3 {
				if err := argCollation(c, args[2]); err != nil {
					return nil, err
				}
			}
			a, err := argString(args[0])
			if err != nil {
				return nil, err
			}
			b, err := argString(args[1])
			if err != nil {
				return nil, err
			}
			return boolSeq(f(a, b))
		})
	}
	strPred("contains", strings.Contains)
	strPred("starts-with", strings.HasPrefix)
	strPred("ends-with", strings.HasSuffix)
	strFn := func(name string, f func(a, b string) string) {
		fn(name, 2, 3, func(c Context, args []Sequence) (Sequence, error) {
			if len(args) == 3 {
				if err := argCollation(c, args[2]); err != nil {
					return nil, err
				}
			}
			a, err := argString(args[0])
			if err != nil {
				return nil, err
			}
			b, err := argString(args[1])
			if err != nil {
				return nil, err
			}
			return strSeq(f(a, b))
		})
	}
	strFn("substring-before", func(a, b string) string {
		if i := strings.Index(a, b); i >= 0 {
			return a[:i]
		}
		return ""
	})
	strFn("substring-after", func(a, b string) string {
		if b == "" {
			return a
		}
		if i := strings.Index(a, b); i >= 0 {
			return a[i+len(b):]
		}
		return ""
	})
	fn("matches", 2, 3, fnMatches)
	fn("replace", 3, 4, fnReplace)
	fn("tokenize", 2, 3, fnTokenize)
	fn("resolve-uri", 1, 2, func(c Context, args []Sequence) (Sequence, error) {
		if len(args[0]) == 0 {
			return nil, nil
		}
		rel, err := argString(args[0])
		if err != nil {
			return nil, err
		}
		base := c.c.dyn.sc.BaseURI
		if len(args) == 2 {
			if base, err = argString(args[1]); err != nil {
				return nil, err
			}
		}
		r, err := url.Parse(rel)
		if err != nil {
			return nil, errf("FORG0002", "invalid URI %q", rel)
		}
		if r.IsAbs() {
			return one(String{rel, TAnyURI}), nil
		}
		b, err := url.Parse(base)
		if err != nil || !b.IsAbs() {
			return nil, errf("FORG0002", "invalid base URI %q", base)
		}
		return one(String{b.ResolveReference(r).String(), TAnyURI}), nil
	})
}

// positionWindow reads the start and optional length arguments of
// substring and subsequence: the positions p kept are start <= p < end.
func positionWindow(name string, args []Sequence) (start, end float64, err error) {
	st, err := argNumeric(args[1])
	if err != nil {
		return 0, 0, err
	}
	if st == nil {
		return 0, 0, errf("XPTY0004", "%s start must not be empty", name)
	}
	start, end = roundXPath(toFloat(st)), math.Inf(1)
	if len(args) == 3 {
		ln, err := argNumeric(args[2])
		if err != nil {
			return 0, 0, err
		}
		if ln == nil {
			return 0, 0, errf("XPTY0004", "%s length must not be empty", name)
		}
		end = start + roundXPath(toFloat(ln))
	}
	return start, end, nil
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func percentEncode(s string, keep func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if keep(s[i]) {
			b.WriteByte(s[i])
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[s[i]>>4])+string("0123456789abcdef"[s[i]&15])))
		}
	}
	return b.String()
}

func isXMLChar(cp int64) bool {
	return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF)
}

func roundXPath(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	return math.Floor(f + 0.5)
}

func ctxString(c Context, args []Sequence) (string, error) {
	if len(args) == 0 {
		if c.c.item == nil {
			return "", errf("XPDY0002", "no context item")
		}
		if n, ok := c.c.item.(Node); ok {
			return n.StringValue(), nil
		}
		return c.c.item.(Atomic).String(), nil
	}
	a, err := atomizeOpt(args[0])
	if err != nil || a == nil {
		return "", err
	}
	return a.String(), nil
}
