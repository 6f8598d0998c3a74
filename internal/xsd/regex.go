package xsd

import (
	"fmt"
	"regexp"
	"strings"
)

// Multi-character escapes of XML Schema regular expressions, as Go
// regexp class contents (without brackets) and as whole classes.
var (
	classI = `\p{L}_:`
	classC = `\p{L}\p{N}\p{Mn}\p{Mc}._:\-\x{B7}`
)

// translateRegexp turns an XML Schema regular expression (Part 2,
// appendix F) into a Go regexp matching the whole value. It covers the
// common cases; Unicode block escapes (\p{IsBasicLatin}) and character
// class subtraction are refused with ErrUnsupported.
func translateRegexp(x string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?:`)
	rs := []rune(x)
	depth := 0 // inside a character class when > 0
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("pattern %q ends with a lone backslash", x)
			}
			i++
			c := rs[i]
			in := depth > 0
			switch c {
			case 'i', 'c':
				cls := classI
				if c == 'c' {
					cls = classC
				}
				if in {
					b.WriteString(cls)
				} else {
					b.WriteString("[" + cls + "]")
				}
			case 'I', 'C', 'W':
				if in {
					return nil, fmt.Errorf("pattern %q: %w: \\%c inside a character class", x, ErrUnsupported, c)
				}
				switch c {
				case 'I':
					b.WriteString("[^" + classI + "]")
				case 'C':
					b.WriteString("[^" + classC + "]")
				default:
					b.WriteString(`[\p{P}\p{Z}\p{C}]`)
				}
			case 'w':
				if in {
					return nil, fmt.Errorf("pattern %q: %w: \\w inside a character class", x, ErrUnsupported)
				}
				b.WriteString(`[^\p{P}\p{Z}\p{C}]`)
			case 'd':
				b.WriteString(`\p{Nd}`)
			case 'D':
				b.WriteString(`\P{Nd}`)
			case 's':
				if in {
					b.WriteString(` \t\n\r`)
				} else {
					b.WriteString(`[ \t\n\r]`)
				}
			case 'S':
				if in {
					return nil, fmt.Errorf("pattern %q: %w: \\S inside a character class", x, ErrUnsupported)
				}
				b.WriteString(`[^ \t\n\r]`)
			case 'p', 'P':
				j := i + 1
				if j >= len(rs) || rs[j] != '{' {
					return nil, fmt.Errorf("pattern %q: \\%c without {name}", x, c)
				}
				k := j
				for k < len(rs) && rs[k] != '}' {
					k++
				}
				if k >= len(rs) {
					return nil, fmt.Errorf("pattern %q: unterminated \\%c{", x, c)
				}
				name := string(rs[j+1 : k])
				if strings.HasPrefix(name, "Is") {
					return nil, fmt.Errorf("pattern %q: %w: Unicode block escape \\%c{%s}", x, ErrUnsupported, c, name)
				}
				b.WriteString(`\` + string(c) + "{" + name + "}")
				i = k
			case 'n', 'r', 't', '\\', '|', '.', '-', '^', '?', '*', '+', '{', '}', '(', ')', '[', ']', '$':
				b.WriteString(`\` + string(c))
			default:
				return nil, fmt.Errorf("pattern %q: unknown escape \\%c", x, c)
			}
		case '[':
			if depth > 0 {
				if i > 0 && rs[i-1] == '-' {
					return nil, fmt.Errorf("pattern %q: %w: character class subtraction", x, ErrUnsupported)
				}
				b.WriteString(`\[`)
				continue
			}
			depth++
			b.WriteByte('[')
			if i+1 < len(rs) && rs[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
		case ']':
			if depth > 0 {
				depth--
			}
			b.WriteByte(']')
		case '^', '$':
			b.WriteString(`\` + string(r))
		case '.':
			if depth > 0 {
				b.WriteString(`.`)
			} else {
				b.WriteString(`[^\n\r]`)
			}
		case '(':
			if depth == 0 && i+1 < len(rs) && rs[i+1] == '?' {
				return nil, fmt.Errorf("pattern %q: '(?' is not XML Schema syntax", x)
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", x, err)
	}
	return re, nil
}
