package xpath2

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// compileRegex translates an XPath regular expression with its flags into
// a Go regexp. XPath-only syntax that RE2 lacks (back-references,
// character class subtraction, \p{Is...} blocks) is refused with FORX0002.
func compileRegex(pat, flags string) (*regexp.Regexp, error) {
	var goFlags string
	xflag := false
	for _, f := range flags {
		switch f {
		case 's', 'm', 'i':
			if !strings.ContainsRune(goFlags, f) {
				goFlags += string(f)
			}
		case 'x':
			xflag = true
		default:
			return nil, errf("FORX0001", "invalid regular expression flag %q", f)
		}
	}
	dotAll := strings.ContainsRune(goFlags, 's')
	var b strings.Builder
	if goFlags != "" {
		b.WriteString("(?" + goFlags + ")")
	}
	bad := func(msg string) error { return errf("FORX0002", "invalid regular expression %q: %s", pat, msg) }
	inClass := 0
	groups := 0
	closed := 0
	rs := []rune(pat)
	if xflag {
		// whitespace is removed outside character classes before the
		// regex is read (so "\ s" is "\s")
		isWS := func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
		kept := rs[:0:0]
		depth := 0
		for j := 0; j < len(rs); j++ {
			r := rs[j]
			switch {
			case r == '\\':
				kept = append(kept, r)
				for depth == 0 && j+1 < len(rs) && isWS(rs[j+1]) {
					j++
				}
				if j+1 < len(rs) {
					j++
					kept = append(kept, rs[j])
				}
				continue
			case r == '[':
				depth++
			case r == ']' && depth > 0:
				depth--
			case depth == 0 && isWS(r):
				continue
			}
			kept = append(kept, r)
		}
		rs = kept
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\\':
			if i+1 >= len(rs) {
				return nil, bad("trailing backslash")
			}
			i++
			e := rs[i]
			switch e {
			case 'n', 'r', 't':
				b.WriteString("\\" + string(e))
			case '\\', '|', '.', '?', '*', '+', '(', ')', '{', '}', '-', '[', ']', '^', '$':
				b.WriteString("\\" + string(e))
			case 'd':
				b.WriteString(`\p{Nd}`)
			case 'D':
				if inClass > 0 {
					return nil, bad(`\D in a character class`)
				}
				b.WriteString(`\P{Nd}`)
			case 's':
				if inClass > 0 {
					b.WriteString(`\t\n\r `)
				} else {
					b.WriteString(`[\t\n\r ]`)
				}
			case 'S':
				if inClass > 0 {
					return nil, bad(`\S in a character class`)
				}
				b.WriteString(`[^\t\n\r ]`)
			case 'w':
				if inClass > 0 {
					b.WriteString(`\p{L}\p{M}\p{N}\p{S}`)
				} else {
					b.WriteString(`[\p{L}\p{M}\p{N}\p{S}]`)
				}
			case 'W':
				if inClass > 0 {
					b.WriteString(`\p{P}\p{Z}\p{C}`)
				} else {
					b.WriteString(`[\p{P}\p{Z}\p{C}]`)
				}
			case 'i':
				if inClass > 0 {
					b.WriteString(`\p{L}_:`)
				} else {
					b.WriteString(`[\p{L}_:]`)
				}
			case 'I':
				if inClass > 0 {
					return nil, bad(`\I in a character class`)
				}
				b.WriteString(`[^\p{L}_:]`)
			case 'c':
				if inClass > 0 {
					b.WriteString(`\p{L}\p{Nd}\p{Mn}\p{Mc}._:\-·`)
				} else {
					b.WriteString(`[\p{L}\p{Nd}\p{Mn}\p{Mc}._:\-·]`)
				}
			case 'C':
				if inClass > 0 {
					return nil, bad(`\C in a character class`)
				}
				b.WriteString(`[^\p{L}\p{Nd}\p{Mn}\p{Mc}._:\-·]`)
			case 'p', 'P':
				if i+1 >= len(rs) || rs[i+1] != '{' {
					return nil, bad(`\p needs {name}`)
				}
				end := i + 2
				for end < len(rs) && rs[end] != '}' {
					end++
				}
				if end >= len(rs) {
					return nil, bad(`unterminated \p{`)
				}
				name := string(rs[i+2 : end])
				if blk, ok := blocks[name]; ok {
					neg := ""
					if e == 'P' {
						neg = "^"
					}
					if inClass > 0 {
						if neg != "" {
							return nil, bad(`\P{Is...} in a character class`)
						}
						b.WriteString(blk)
					} else {
						b.WriteString("[" + neg + blk + "]")
					}
					i = end
					break
				}
				if !validCategory(name) {
					return nil, bad("unknown category " + name)
				}
				b.WriteString("\\" + string(e) + "{" + name + "}")
				i = end
			default:
				if e >= '1' && e <= '9' {
					return nil, bad("back-references are not supported")
				}
				return nil, bad("invalid escape \\" + string(e))
			}
		case '[':
			if inClass > 0 {
				return nil, bad("nested character class or subtraction is not supported")
			}
			inClass++
			b.WriteRune('[')
			if i+1 < len(rs) && rs[i+1] == '^' {
				b.WriteRune('^')
				i++
			}
			if i+1 < len(rs) && rs[i+1] == ']' {
				return nil, bad("empty character class")
			}
		case ']':
			if inClass == 0 {
				return nil, bad("unbalanced ]")
			}
			inClass--
			b.WriteRune(']')
		case '-':
			if inClass > 0 && i+1 < len(rs) && rs[i+1] == '[' {
				return nil, bad("character class subtraction is not supported")
			}
			if inClass > 0 {
				prevRange := i >= 4 && rs[i-2] == '-' && rs[i-3] != '['
				if prevRange && i+1 < len(rs) && rs[i+1] != ']' {
					return nil, bad("- after a range must end the class")
				}
				b.WriteString(`-`)
			} else {
				b.WriteRune('-')
			}
		case '.':
			if inClass > 0 {
				b.WriteString(`\.`)
			} else if dotAll {
				b.WriteString(`(?s:.)`)
			} else {
				b.WriteString(`[^\n\r]`)
			}
		case '(':
			if inClass > 0 {
				b.WriteString(`\(`)
				break
			}
			if i+1 < len(rs) && rs[i+1] == '?' {
				return nil, bad("(? is not XPath 2.0 syntax")
			}
			groups++
			b.WriteRune('(')
		case ')':
			if inClass > 0 {
				b.WriteString(`\)`)
				break
			}
			closed++
			b.WriteRune(')')
		case '{':
			if inClass > 0 {
				b.WriteString(`\{`)
				break
			}
			end := i + 1
			for end < len(rs) && rs[end] != '}' {
				end++
			}
			if end >= len(rs) {
				return nil, bad("unterminated quantifier")
			}
			q := string(rs[i+1 : end])
			lo, hi, hasComma := strings.Cut(q, ",")
			if _, err := strconv.Atoi(lo); err != nil {
				return nil, bad("invalid quantifier {" + q + "}")
			}
			if hasComma && hi != "" {
				if _, err := strconv.Atoi(hi); err != nil {
					return nil, bad("invalid quantifier {" + q + "}")
				}
			}
			b.WriteString("{" + q + "}")
			i = end
		case '}':
			if inClass > 0 {
				b.WriteString(`\}`)
			} else {
				return nil, bad("unbalanced }")
			}
		case '^', '$':
			if inClass > 0 && r == '$' {
				b.WriteString(`\$`)
			} else if inClass > 0 {
				b.WriteString(`\^`)
			} else {
				b.WriteRune(r)
			}
		case '&', '~', '#', '"', '\'', '<', '>', '!', '%', ',', '/', ':', ';', '=', '@', '`':
			b.WriteString(regexp.QuoteMeta(string(r)))
		default:
			b.WriteRune(r)
		}
	}
	if inClass > 0 {
		return nil, bad("unterminated character class")
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, &Error{Code: "FORX0002", Msg: "invalid regular expression " + strconv.Quote(pat), Err: err}
	}
	return re, nil
}

var categories = map[string]bool{
	"L": true, "Lu": true, "Ll": true, "Lt": true, "Lm": true, "Lo": true,
	"M": true, "Mn": true, "Mc": true, "Me": true,
	"N": true, "Nd": true, "Nl": true, "No": true,
	"P": true, "Pc": true, "Pd": true, "Ps": true, "Pe": true, "Pi": true, "Pf": true, "Po": true,
	"Z": true, "Zs": true, "Zl": true, "Zp": true,
	"S": true, "Sm": true, "Sc": true, "Sk": true, "So": true,
	"C": true, "Cc": true, "Cf": true, "Co": true,
}

// blocks are the Unicode blocks \p{Is...} may name (a subset).
var blocks = map[string]string{
	"IsBasicLatin":           `\x{0}-\x{7F}`,
	"IsLatin-1Supplement":    `\x{80}-\x{FF}`,
	"IsLatinExtended-A":      `\x{100}-\x{17F}`,
	"IsLatinExtended-B":      `\x{180}-\x{24F}`,
	"IsGreek":                `\x{370}-\x{3FF}`,
	"IsCyrillic":             `\x{400}-\x{4FF}`,
	"IsHebrew":               `\x{590}-\x{5FF}`,
	"IsArabic":               `\x{600}-\x{6FF}`,
	"IsGeneralPunctuation":   `\x{2000}-\x{206F}`,
	"IsCurrencySymbols":      `\x{20A0}-\x{20CF}`,
	"IsCJKUnifiedIdeographs": `\x{4E00}-\x{9FFF}`,
	"IsHiragana":             `\x{3040}-\x{309F}`,
	"IsKatakana":             `\x{30A0}-\x{30FF}`,
}

func validCategory(name string) bool { return categories[name] }

func regexArgs(args []Sequence, flagIdx int) (string, *regexp.Regexp, error) {
	in, err := argString(args[0])
	if err != nil {
		return "", nil, err
	}
	pat, err := argStringReq(args[1])
	if err != nil {
		return "", nil, err
	}
	flags := ""
	if len(args) > flagIdx {
		if flags, err = argStringReq(args[flagIdx]); err != nil {
			return "", nil, err
		}
	}
	re, err := compileRegex(pat, flags)
	return in, re, err
}

func fnMatches(c Context, args []Sequence) (Sequence, error) {
	in, re, err := regexArgs(args, 2)
	if err != nil {
		return nil, err
	}
	return boolSeq(re.MatchString(in))
}

func fnReplace(c Context, args []Sequence) (Sequence, error) {
	in, err := argString(args[0])
	if err != nil {
		return nil, err
	}
	pat, err := argStringReq(args[1])
	if err != nil {
		return nil, err
	}
	repl, err := argStringReq(args[2])
	if err != nil {
		return nil, err
	}
	flags := ""
	if len(args) > 3 {
		if flags, err = argStringReq(args[3]); err != nil {
			return nil, err
		}
	}
	re, err := compileRegex(pat, flags)
	if err != nil {
		return nil, err
	}
	if re.MatchString("") {
		return nil, errf("FORX0003", "pattern %q matches the empty string", pat)
	}
	// validate the replacement
	for i := 0; i < len(repl); i++ {
		switch repl[i] {
		case '\\':
			if i+1 >= len(repl) || (repl[i+1] != '\\' && repl[i+1] != '$') {
				return nil, errf("FORX0004", "invalid replacement string %q", repl)
			}
			i++
		case '$':
			if i+1 >= len(repl) || repl[i+1] < '0' || repl[i+1] > '9' {
				return nil, errf("FORX0004", "invalid replacement string %q", repl)
			}
		}
	}
	ngroups := re.NumSubexp()
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(in, -1) {
		b.WriteString(in[last:m[0]])
		for i := 0; i < len(repl); i++ {
			ch := repl[i]
			switch {
			case ch == '\\':
				i++
				b.WriteByte(repl[i])
			case ch == '$':
				n := int(repl[i+1] - '0')
				i++
				for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' && n*10+int(repl[i+1]-'0') <= ngroups {
					n = n*10 + int(repl[i+1]-'0')
					i++
				}
				if n <= ngroups && m[2*n] >= 0 {
					b.WriteString(in[m[2*n]:m[2*n+1]])
				}
			default:
				b.WriteByte(ch)
			}
		}
		last = m[1]
		if err := c.strBytes(b.Len()); err != nil {
			return nil, err
		}
	}
	b.WriteString(in[last:])
	return strSeq(b.String())
}

func fnTokenize(c Context, args []Sequence) (Sequence, error) {
	in, re, err := regexArgs(args, 2)
	if err != nil {
		return nil, err
	}
	if re.MatchString("") {
		return nil, errf("FORX0003", "pattern matches the empty string")
	}
	if in == "" {
		return nil, nil
	}
	var out Sequence
	last := 0
	for _, m := range re.FindAllStringIndex(in, -1) {
		out = append(out, Str(in[last:m[0]]))
		last = m[1]
		if err := c.c.items(len(out)); err != nil {
			return nil, err
		}
	}
	out = append(out, Str(in[last:]))
	if err := c.c.items(len(out)); err != nil {
		return nil, err
	}
	_ = utf8.RuneLen
	return out, nil
}
