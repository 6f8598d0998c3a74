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
	tkDir // an XQuery direct constructor, scanned whole (xquery_lex.go)
)

type token struct {
	kind tokKind
	val  string
	pos  int
	dir  *dirNode // tkDir: a direct constructor (XQuery)
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
	toks, _, err := lexFrom(src, 0, false, false, 0)
	return toks, err
}

// lexFrom splits src[i:] into tokens ending with an EOF token. xq adds
// XQuery's tokens: braces, semicolons, string literals with references
// and direct constructors. inBrace ends the tokens at the '}' closing an
// enclosed expression; the index returned is the one after it.
// lexFrom lexes src from i; nest counts the direct constructors and
// enclosed expressions it is inside (MaxNesting).
func lexFrom(src string, i int, xq, inBrace bool, nest int) ([]token, int, error) {
	if nest > MaxNesting {
		return nil, 0, syntaxErr(i, "expression nested deeper than the limit of %d levels", MaxNesting)
	}
	var toks []token
	depth := 0
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
					return nil, 0, syntaxErr(i, "unterminated comment")
				}
				i = j
				continue
			}
			break
		}
		if i >= len(src) {
			if inBrace {
				return nil, 0, syntaxErr(i, "missing '}' closing an enclosed expression")
			}
			toks = append(toks, token{kind: tkEOF, pos: i})
			return toks, i, nil
		}
		start := i
		c := src[i]
		if xq {
			switch {
			case c == '{':
				depth++
				toks = append(toks, token{kind: tkSym, val: "{", pos: i})
				i++
				continue
			case c == '}':
				if depth == 0 {
					if !inBrace {
						return nil, 0, syntaxErr(i, "unexpected '}'")
					}
					toks = append(toks, token{kind: tkEOF, pos: i})
					return toks, i + 1, nil
				}
				depth--
				toks = append(toks, token{kind: tkSym, val: "}", pos: i})
				i++
				continue
			case c == ';':
				toks = append(toks, token{kind: tkSym, val: ";", pos: i})
				i++
				continue
			case c == '<' && operandNext(toks) && i+1 < len(src) && startsDirect(src[i+1:]):
				d, j, err := scanDirect(src, i, nest+1)
				if err != nil {
					return nil, 0, err
				}
				toks = append(toks, token{kind: tkDir, pos: i, dir: d})
				i = j
				continue
			}
		}
		switch {
		case c == '"' || c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, 0, syntaxErr(start, "unterminated string literal")
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
				if xq && src[i] == '&' {
					r, n, err := scanRef(src, i)
					if err != nil {
						return nil, 0, err
					}
					b.WriteString(r)
					i += n
					continue
				}
				b.WriteByte(src[i])
				i++
			}
			toks = append(toks, token{kind: tkString, val: b.String(), pos: start})
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
					return nil, 0, syntaxErr(start, "malformed number")
				}
			}
			if i < len(src) {
				if r, _ := utf8.DecodeRuneInString(src[i:]); isNameStart(r) || r == '.' {
					return nil, 0, syntaxErr(start, "number followed by a name character")
				}
			}
			toks = append(toks, token{kind: kind, val: src[start:i], pos: start})
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
					toks = append(toks, token{kind: tkName, val: src[i:j], pos: start})
					i = j
					continue
				}
			}
			toks = append(toks, token{kind: tkSym, val: "*", pos: start})
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
				toks = append(toks, token{kind: tkName, val: src[i:j], pos: start})
				i = j
				continue
			}
			for _, s := range []string{"!=", "<=", ">=", "<<", ">>", "//", "::", "..", ":="} {
				if strings.HasPrefix(src[i:], s) {
					toks = append(toks, token{kind: tkSym, val: s, pos: start})
					i += 2
					goto next
				}
			}
			if strings.ContainsRune("()[],/@.=<>+-|?$:", rune(c)) {
				toks = append(toks, token{kind: tkSym, val: string(c), pos: start})
				i++
				continue
			}
			return nil, 0, syntaxErr(start, "unexpected character %q", r)
		}
	next:
	}
}
