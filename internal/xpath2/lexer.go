package xpath2

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tkEOF  tokKind = iota
	tkName         // NCName or QName; val holds it; "p:*" and "*:l" too
	tkString
	tkInt
	tkDec
	tkDbl
	tkSym
)

type token struct {
	kind tokKind
	val  string
	pos  int
}

func isNameStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || (r >= 0xC0 && r != 0xD7 && r != 0xF7 && !unicode.IsSpace(r) && !unicode.IsPunct(r) && !unicode.IsSymbol(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r))
}

func isNameChar(r rune) bool {
	return isNameStart(r) || r == '-' || r == '.' || unicode.IsDigit(r) || r == 0xB7 || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

func syntaxErr(pos int, format string, args ...any) *Error {
	e := errf("XPST0003", format, args...)
	e.Msg = "at offset " + itoa(pos) + ": " + e.Msg
	return e
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

// lex splits an expression into tokens.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		// skip whitespace and comments
		for i < len(src) {
			c := src[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				i++
				continue
			}
			if c == '(' && i+1 < len(src) && src[i+1] == ':' {
				depth := 0
				j := i
				for j < len(src) {
					if strings.HasPrefix(src[j:], "(:") {
						depth++
						j += 2
					} else if strings.HasPrefix(src[j:], ":)") {
						depth--
						j += 2
						if depth == 0 {
							break
						}
					} else {
						j++
					}
				}
				if depth != 0 {
					return nil, syntaxErr(i, "unterminated comment")
				}
				i = j
				continue
			}
			break
		}
		if i >= len(src) {
			toks = append(toks, token{tkEOF, "", i})
			return toks, nil
		}
		start := i
		c := src[i]
		switch {
		case c == '"' || c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, syntaxErr(start, "unterminated string literal")
				}
				if src[i] == c {
					if i+1 < len(src) && src[i+1] == c {
						b.WriteByte(c)
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(src[i])
				i++
			}
			toks = append(toks, token{tkString, b.String(), start})
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			kind := tkInt
			for i < len(src) && src[i] >= '0' && src[i] <= '9' {
				i++
			}
			if i < len(src) && src[i] == '.' {
				kind = tkDec
				i++
				for i < len(src) && src[i] >= '0' && src[i] <= '9' {
					i++
				}
			}
			if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
				j := i + 1
				if j < len(src) && (src[j] == '+' || src[j] == '-') {
					j++
				}
				if j < len(src) && src[j] >= '0' && src[j] <= '9' {
					for j < len(src) && src[j] >= '0' && src[j] <= '9' {
						j++
					}
					i = j
					kind = tkDbl
				} else {
					return nil, syntaxErr(start, "malformed number")
				}
			}
			if i < len(src) {
				if r, _ := utf8.DecodeRuneInString(src[i:]); isNameStart(r) || r == '.' {
					return nil, syntaxErr(start, "number followed by a name character")
				}
			}
			toks = append(toks, token{kind, src[start:i], start})
		case c == '*':
			if i+2 < len(src) && src[i+1] == ':' {
				if r, _ := utf8.DecodeRuneInString(src[i+2:]); isNameStart(r) {
					j := i + 2
					for j < len(src) {
						r, n := utf8.DecodeRuneInString(src[j:])
						if !isNameChar(r) {
							break
						}
						j += n
					}
					toks = append(toks, token{tkName, src[i:j], start})
					i = j
					continue
				}
			}
			toks = append(toks, token{tkSym, "*", start})
			i++
		default:
			r, n := utf8.DecodeRuneInString(src[i:])
			if isNameStart(r) {
				j := i + n
				for j < len(src) {
					r, n := utf8.DecodeRuneInString(src[j:])
					if !isNameChar(r) {
						break
					}
					j += n
				}
				if j+1 < len(src) && src[j] == ':' {
					if src[j+1] == '*' {
						j += 2
					} else if r, _ := utf8.DecodeRuneInString(src[j+1:]); isNameStart(r) {
						j++
						for j < len(src) {
							r, n := utf8.DecodeRuneInString(src[j:])
							if !isNameChar(r) {
								break
							}
							j += n
						}
					}
				}
				toks = append(toks, token{tkName, src[i:j], start})
				i = j
				continue
			}
			for _, s := range []string{"!=", "<=", ">=", "<<", ">>", "//", "::", "..", ":="} {
				if strings.HasPrefix(src[i:], s) {
					toks = append(toks, token{tkSym, s, start})
					i += 2
					goto next
				}
			}
			if strings.ContainsRune("()[],/@.=<>+-|?$:", rune(c)) {
				toks = append(toks, token{tkSym, string(c), start})
				i++
				continue
			}
			return nil, syntaxErr(start, "unexpected character %q", r)
		}
	next:
	}
}
