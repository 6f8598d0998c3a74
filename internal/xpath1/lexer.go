package xpath1

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is a token's kind (XPath 1.0 section 3.7, ExprToken).
type tokKind uint8

const (
	tEOF tokKind = iota
	tLParen
	tRParen
	tLBrack
	tRBrack
	tDot
	tDotDot
	tAt
	tComma
	tColonColon
	tSlash
	tSlashSlash
	tPipe
	tPlus
	tMinus
	tEq
	tNe
	tLt
	tLe
	tGt
	tGe
	tMul      // '*' as the multiply operator
	tNameTest // '*', NCName ':' '*' or a QName, in text
	tNodeType // comment, text, processing-instruction, node (before '(')
	tOpName   // and, or, mod, div
	tFuncName // a QName before '('
	tAxisName // an NCName before '::'
	tLiteral
	tNumber
	tVar // '$' QName; text is the QName
)

type token struct {
	kind tokKind
	pos  int
	text string  // names, literals
	num  float64 // tNumber
}

// lex splits src into tokens, applying section 3.7's disambiguation
// rules: after a token that ends an operand, '*' multiplies and an NCName
// is an operator name; an NCName before '(' is a node type or function
// name; before '::' it is an axis name.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	// operand reports whether the previous token ends an operand, so that
	// '*' and and/or/mod/div are operators.
	operand := func() bool {
		if len(toks) == 0 {
			return false
		}
		switch toks[len(toks)-1].kind {
		case tAt, tColonColon, tLParen, tLBrack, tComma, tSlash, tSlashSlash, tPipe,
			tPlus, tMinus, tEq, tNe, tLt, tLe, tGt, tGe, tMul, tOpName:
			return false
		}
		return true
	}
	for {
		for i < len(src) && isSpace(src[i]) {
			i++
		}
		if i == len(src) {
			toks = append(toks, token{kind: tEOF, pos: i})
			return toks, nil
		}
		start := i
		c := src[i]
		two := ""
		if i+1 < len(src) {
			two = src[i : i+2]
		}
		simple := func(k tokKind, n int) {
			toks = append(toks, token{kind: k, pos: start})
			i += n
		}
		switch {
		case c == '(':
			simple(tLParen, 1)
		case c == ')':
			simple(tRParen, 1)
		case c == '[':
			simple(tLBrack, 1)
		case c == ']':
			simple(tRBrack, 1)
		case c == ',':
			simple(tComma, 1)
		case c == '@':
			simple(tAt, 1)
		case c == '|':
			simple(tPipe, 1)
		case c == '+':
			simple(tPlus, 1)
		case c == '-':
			simple(tMinus, 1)
		case c == '=':
			simple(tEq, 1)
		case two == "!=":
			simple(tNe, 2)
		case two == "<=":
			simple(tLe, 2)
		case c == '<':
			simple(tLt, 1)
		case two == ">=":
			simple(tGe, 2)
		case c == '>':
			simple(tGt, 1)
		case two == "::":
			simple(tColonColon, 2)
		case two == "//":
			simple(tSlashSlash, 2)
		case c == '/':
			simple(tSlash, 1)
		case two == "..":
			simple(tDotDot, 2)
		case c == '.' && !(i+1 < len(src) && isDigit(src[i+1])):
			simple(tDot, 1)
		case c == '.' || isDigit(c):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if j < len(src) && src[j] == '.' {
				j++
				for j < len(src) && isDigit(src[j]) {
					j++
				}
			}
			// Digits ('.' Digits?)? always parses; the only error is a
			// value out of range, for which ParseFloat gives +Inf.
			f, _ := strconv.ParseFloat(src[i:j], 64)
			toks = append(toks, token{kind: tNumber, pos: start, num: f})
			i = j
		case c == '"' || c == '\'':
			j := strings.IndexByte(src[i+1:], c)
			if j < 0 {
				return nil, &Error{Pos: start, Msg: "unterminated string literal"}
			}
			toks = append(toks, token{kind: tLiteral, pos: start, text: src[i+1 : i+1+j]})
			i += j + 2
		case c == '*':
			if operand() {
				simple(tMul, 1)
			} else {
				toks = append(toks, token{kind: tNameTest, pos: start, text: "*"})
				i++
			}
		case c == '$':
			j, ok := scanQName(src, i+1)
			if !ok || j < 0 {
				return nil, &Error{Pos: start, Msg: "'$' without a variable name"}
			}
			toks = append(toks, token{kind: tVar, pos: start, text: src[i+1 : j]})
			i = j
		default:
			j := scanNCName(src, i)
			if j < 0 {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, &Error{Pos: start, Msg: "unexpected character " + strconv.QuoteRune(r)}
			}
			name := src[i:j]
			if operand() {
				switch name {
				case "and", "or", "mod", "div":
					toks = append(toks, token{kind: tOpName, pos: start, text: name})
					i = j
					continue
				}
				return nil, &Error{Pos: start, Msg: "expected an operator, found " + strconv.Quote(name)}
			}
			// NCName ':' '*' or a QName.
			if j+1 < len(src) && src[j] == ':' && src[j+1] != ':' {
				if src[j+1] == '*' {
					toks = append(toks, token{kind: tNameTest, pos: start, text: src[i : j+2]})
					i = j + 2
					continue
				}
				k := scanNCName(src, j+1)
				if k < 0 {
					return nil, &Error{Pos: j, Msg: "a name must follow the prefix " + strconv.Quote(name)}
				}
				j = k
				name = src[i:j]
			}
			k := j
			for k < len(src) && isSpace(src[k]) {
				k++
			}
			kind := tNameTest
			switch {
			case k < len(src) && src[k] == '(':
				kind = tFuncName
				switch name {
				case "comment", "text", "processing-instruction", "node":
					kind = tNodeType
				}
			case k+1 < len(src) && src[k:k+2] == "::" && !strings.Contains(name, ":"):
				kind = tAxisName
			}
			toks = append(toks, token{kind: kind, pos: start, text: name})
			i = j
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNCName returns the end of the NCName at src[i], or -1.
func scanNCName(src string, i int) int {
	if i >= len(src) {
		return -1
	}
	r, n := utf8.DecodeRuneInString(src[i:])
	if !isNameStart(r) {
		return -1
	}
	j := i + n
	for j < len(src) {
		r, n := utf8.DecodeRuneInString(src[j:])
		if !isNameRune(r) {
			break
		}
		j += n
	}
	return j
}

// scanQName returns the end of the QName at src[i]; ok is false when
// there is none.
func scanQName(src string, i int) (int, bool) {
	j := scanNCName(src, i)
	if j < 0 {
		return -1, false
	}
	if j+1 < len(src) && src[j] == ':' && src[j+1] != ':' {
		if k := scanNCName(src, j+1); k >= 0 {
			return k, true
		}
	}
	return j, true
}

func isNameStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

func isNameRune(r rune) bool {
	return isNameStart(r) || r == '-' || r == '.' || unicode.IsDigit(r) ||
		unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Lm) || r == 0xB7
}

// IsNCName reports whether s is an NCName (a name without a colon), by
// the same rules the lexer reads names with.
func IsNCName(s string) bool { return s != "" && scanNCName(s, 0) == len(s) }
