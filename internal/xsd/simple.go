package xsd

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

type variety uint8

const (
	atomic variety = iota
	list
	union
)

type wsMode uint8

const (
	wsPreserve wsMode = iota
	wsReplace
	wsCollapse
)

// simpleType is one step of a simple type's derivation: a built-in (with
// its lexical check), a list, a union, or a restriction of base with
// facets.
type simpleType struct {
	name    QName
	variety variety
	prim    string // the primitive built-in an atomic type derives from
	ws      wsMode
	lexical func(v string, ctx *etree.Element) (ok bool, why string)
	base    *simpleType
	item    *simpleType
	members []*simpleType
	f       *facets
	err     error
}

type facets struct {
	enum                       []string
	patterns                   []*regexp.Regexp
	patSrc                     []string
	minInc, maxInc             *string
	minExc, maxExc             *string
	length, minLen, maxLen     int
	totalDigits, fractionDigit int
}

func (s *Set) simpleDef(sd *schemaDoc, e *etree.Element, name QName) *simpleType {
	for _, c := range e.ChildElements() {
		if c.NamespaceURI() != NS {
			continue
		}
		switch c.Tag {
		case "restriction":
			var base *simpleType
			var err error
			if b := c.SelectAttrValue("base", ""); b != "" {
				base = s.simpleRef(sd, c, b, &err)
			}
			st := s.restriction(sd, c, base, name)
			setErr(&st.err, err)
			return st
		case "list":
			st := &simpleType{name: name, variety: list, ws: wsCollapse}
			if it := c.SelectAttrValue("itemType", ""); it != "" {
				st.item = s.simpleRef(sd, c, it, &st.err)
			}
			for _, x := range c.ChildElements() {
				if x.NamespaceURI() == NS && x.Tag == "simpleType" {
					st.item = s.anonymous(sd, x).simple
				}
			}
			if st.item == nil {
				st.item = s.builtins["anySimpleType"].simple
				setErr(&st.err, sd.errorf(c, "list without itemType"))
			}
			return st
		case "union":
			st := &simpleType{name: name, variety: union, ws: wsCollapse}
			for _, m := range strings.Fields(c.SelectAttrValue("memberTypes", "")) {
				st.members = append(st.members, s.simpleRef(sd, c, m, &st.err))
			}
			for _, x := range c.ChildElements() {
				if x.NamespaceURI() == NS && x.Tag == "simpleType" {
					st.members = append(st.members, s.anonymous(sd, x).simple)
				}
			}
			if len(st.members) == 0 {
				setErr(&st.err, sd.errorf(c, "union without member types"))
			}
			return st
		}
	}
	st := &simpleType{name: name, variety: atomic, prim: "anySimpleType"}
	st.err = sd.errorf(e, "simpleType needs a restriction, list or union")
	return st
}

// simpleRef resolves the simple type named v in e.
func (s *Set) simpleRef(sd *schemaDoc, e *etree.Element, v string, errp *error) *simpleType {
	t := s.typeRef(sd, e, v, errp)
	if t.complex || t.simple == nil {
		setErr(errp, sd.errorf(e, "%s is not a simple type", t.Name))
		return s.builtins["anySimpleType"].simple
	}
	return t.simple
}

var ordered = map[string]bool{"decimal": true, "float": true, "double": true, "dateTime": true, "date": true, "time": true}

// restriction compiles the facets of r over base (nil: r's inline
// simpleType).
func (s *Set) restriction(sd *schemaDoc, r *etree.Element, base *simpleType, name QName) *simpleType {
	st := &simpleType{name: name}
	for _, c := range r.ChildElements() {
		if c.NamespaceURI() == NS && c.Tag == "simpleType" {
			base = s.anonymous(sd, c).simple
		}
	}
	if base == nil {
		st.err = sd.errorf(r, "restriction without base")
		base = s.builtins["anySimpleType"].simple
	}
	st.base, st.variety, st.prim, st.ws = base, base.variety, base.prim, base.ws
	f := &facets{length: -1, minLen: -1, maxLen: -1, totalDigits: -1, fractionDigit: -1}
	st.f = f
	var pats []string
	for _, c := range r.ChildElements() {
		if c.NamespaceURI() != NS {
			continue
		}
		v := c.SelectAttrValue("value", "")
		switch c.Tag {
		case "annotation", "simpleType", "attribute", "attributeGroup", "anyAttribute",
			"sequence", "choice", "all", "group":
			// content of a complexContent restriction, compiled elsewhere
		case "enumeration":
			f.enum = append(f.enum, v)
		case "pattern":
			pats = append(pats, v)
		case "minInclusive", "maxInclusive", "minExclusive", "maxExclusive":
			if st.variety != atomic || !ordered[st.prim] {
				setErr(&st.err, sd.unsupported(c, fmt.Sprintf("facet %s on a %s value", c.Tag, st.describe())))
				continue
			}
			if why := base.validate(v, c); why != "" {
				setErr(&st.err, sd.errorf(c, "%s value: %s", c.Tag, why))
				continue
			}
			v = normalize(v, wsCollapse)
			switch c.Tag {
			case "minInclusive":
				f.minInc = &v
			case "maxInclusive":
				f.maxInc = &v
			case "minExclusive":
				f.minExc = &v
			case "maxExclusive":
				f.maxExc = &v
			}
		case "length", "minLength", "maxLength", "totalDigits", "fractionDigits":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				setErr(&st.err, sd.errorf(c, "value %q is not a non-negative integer", v))
				continue
			}
			switch c.Tag {
			case "length":
				f.length = n
			case "minLength":
				f.minLen = n
			case "maxLength":
				f.maxLen = n
			case "totalDigits":
				f.totalDigits = n
			case "fractionDigits":
				f.fractionDigit = n
			}
		case "whiteSpace":
			switch v {
			case "preserve":
				st.ws = wsPreserve
			case "replace":
				st.ws = wsReplace
			case "collapse":
				st.ws = wsCollapse
			default:
				setErr(&st.err, sd.errorf(c, "whiteSpace %q", v))
			}
		default:
			setErr(&st.err, sd.unsupported(c, "facet <xsd:"+c.Tag+">"))
		}
	}
	if len(pats) > 0 {
		for _, p := range pats {
			re, err := translateRegexp(p)
			if err != nil {
				setErr(&st.err, fmt.Errorf("%s: <xsd:pattern>: %w", sd.doc.Pos(r), err))
				continue
			}
			f.patterns = append(f.patterns, re)
			f.patSrc = append(f.patSrc, p)
		}
	}
	return st
}

func (st *simpleType) describe() string {
	switch st.variety {
	case list:
		return "list"
	case union:
		return "union"
	}
	return "xsd:" + st.prim
}

func normalize(v string, ws wsMode) string {
	switch ws {
	case wsReplace:
		return strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, v)
	case wsCollapse:
		return strings.Join(strings.Fields(v), " ")
	}
	return v
}

// validate checks the lexical value raw; it returns "" when it is valid,
// else what is wrong. ctx resolves the prefixes of QName values.
func (st *simpleType) validate(raw string, ctx *etree.Element) string {
	return st.check(normalize(raw, st.ws), ctx)
}

func (st *simpleType) check(v string, ctx *etree.Element) string {
	switch {
	case st.base != nil:
		if why := st.base.check(v, ctx); why != "" {
			return why
		}
	case st.item != nil:
		for _, it := range strings.Fields(v) {
			if why := st.item.validate(it, ctx); why != "" {
				return "list item " + why
			}
		}
	case st.members != nil:
		ok := false
		for _, m := range st.members {
			if m.validate(v, ctx) == "" {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Sprintf("'%s' is valid for no member type of the union", v)
		}
	case st.lexical != nil:
		if ok, why := st.lexical(v, ctx); !ok {
			return fmt.Sprintf("'%s' is not a valid xsd:%s%s", v, st.name.Local, why)
		}
	}
	if st.f != nil {
		return st.f.check(st, v)
	}
	return ""
}

func (f *facets) check(st *simpleType, v string) string {
	if f.length >= 0 || f.minLen >= 0 || f.maxLen >= 0 {
		n := valueLength(st, v)
		switch {
		case f.length >= 0 && n != f.length:
			return fmt.Sprintf("'%s' has length %d, want length %d", v, n, f.length)
		case f.minLen >= 0 && n < f.minLen:
			return fmt.Sprintf("'%s' is shorter than minLength %d (length %d)", v, f.minLen, n)
		case f.maxLen >= 0 && n > f.maxLen:
			return fmt.Sprintf("'%s' is longer than maxLength %d (length %d)", v, f.maxLen, n)
		}
	}
	if len(f.patterns) > 0 {
		ok := false
		for _, re := range f.patterns {
			if re.MatchString(v) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Sprintf("'%s' does not match pattern %s", v, strings.Join(f.patSrc, " | "))
		}
	}
	if len(f.enum) > 0 {
		ok := false
		for _, e := range f.enum {
			if sameValue(st, v, e) {
				ok = true
				break
			}
		}
		if !ok {
			list := f.enum
			more := ""
			if len(list) > 10 {
				list, more = list[:10], ", ..."
			}
			return fmt.Sprintf("'%s' is not one of the enumerated values %s%s", v, strings.Join(list, ", "), more)
		}
	}
	if f.minInc != nil && compare(st.prim, v, *f.minInc) < 0 {
		return fmt.Sprintf("'%s' is below minInclusive %s", v, *f.minInc)
	}
	if f.minExc != nil && compare(st.prim, v, *f.minExc) <= 0 {
		return fmt.Sprintf("'%s' is not above minExclusive %s", v, *f.minExc)
	}
	if f.maxInc != nil && compare(st.prim, v, *f.maxInc) > 0 {
		return fmt.Sprintf("'%s' is above maxInclusive %s", v, *f.maxInc)
	}
	if f.maxExc != nil && compare(st.prim, v, *f.maxExc) >= 0 {
		return fmt.Sprintf("'%s' is not below maxExclusive %s", v, *f.maxExc)
	}
	if f.totalDigits >= 0 || f.fractionDigit >= 0 {
		total, frac := digits(v)
		if f.totalDigits >= 0 && total > f.totalDigits {
			return fmt.Sprintf("'%s' has %d digits, more than totalDigits %d", v, total, f.totalDigits)
		}
		if f.fractionDigit >= 0 && frac > f.fractionDigit {
			return fmt.Sprintf("'%s' has %d fraction digits, more than fractionDigits %d", v, frac, f.fractionDigit)
		}
	}
	return ""
}

func valueLength(st *simpleType, v string) int {
	if st.variety == list {
		return len(strings.Fields(v))
	}
	switch st.prim {
	case "hexBinary":
		return len(v) / 2
	case "base64Binary":
		b, _ := base64.StdEncoding.DecodeString(stripSpace(v))
		return len(b)
	}
	return utf8.RuneCountInString(v)
}

func stripSpace(v string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, v)
}

func sameValue(st *simpleType, v, e string) bool {
	if st.variety == atomic && ordered[st.prim] {
		return compare(st.prim, v, normalize(e, wsCollapse)) == 0
	}
	return v == normalize(e, st.ws)
}

// digits counts the significant digits of a decimal and those after the
// point.
func digits(v string) (total, frac int) {
	v = strings.TrimLeft(v, "+-")
	ip, fp, _ := strings.Cut(v, ".")
	ip = strings.TrimLeft(ip, "0")
	fp = strings.TrimRight(fp, "0")
	return len(ip) + len(fp), len(fp)
}

// compare orders two valid values of an ordered primitive; values it
// cannot order compare equal.
func compare(prim, a, b string) int {
	switch prim {
	case "decimal":
		x, ok1 := new(big.Rat).SetString(strings.TrimPrefix(a, "+"))
		y, ok2 := new(big.Rat).SetString(strings.TrimPrefix(b, "+"))
		if ok1 && ok2 {
			return x.Cmp(y)
		}
	case "float", "double":
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if err1 == nil && err2 == nil {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
		}
	case "dateTime", "date", "time":
		x, ok1 := toTime(prim, a)
		y, ok2 := toTime(prim, b)
		if ok1 && ok2 {
			return x.Compare(y)
		}
	}
	return 0
}

var (
	reDateTime = regexp.MustCompile(`^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$`)
	reDate     = regexp.MustCompile(`^(-?\d{4,})-(\d{2})-(\d{2})(Z|[+-]\d{2}:\d{2})?$`)
	reTime     = regexp.MustCompile(`^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$`)
	reGYear    = regexp.MustCompile(`^-?\d{4,}(Z|[+-]\d{2}:\d{2})?$`)
	reGYM      = regexp.MustCompile(`^-?\d{4,}-(\d{2})(Z|[+-]\d{2}:\d{2})?$`)
	reGMonth   = regexp.MustCompile(`^--(\d{2})(Z|[+-]\d{2}:\d{2})?$`)
	reGMD      = regexp.MustCompile(`^--(\d{2})-(\d{2})(Z|[+-]\d{2}:\d{2})?$`)
	reGDay     = regexp.MustCompile(`^---(\d{2})(Z|[+-]\d{2}:\d{2})?$`)
	reDecimal  = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)$`)
	reInteger  = regexp.MustCompile(`^[+-]?\d+$`)
	reFloat    = regexp.MustCompile(`^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|-?INF|NaN)$`)
	reNCName   = regexp.MustCompile(`^[\p{L}_][\p{L}\p{N}\p{Mn}\p{Mc}._\-\x{B7}]*$`)
	reName     = regexp.MustCompile(`^[\p{L}_:][\p{L}\p{N}\p{Mn}\p{Mc}._:\-\x{B7}]*$`)
	reNMToken  = regexp.MustCompile(`^[\p{L}\p{N}\p{Mn}\p{Mc}._:\-\x{B7}]+$`)
	reLanguage = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)
	reHex      = regexp.MustCompile(`^([0-9a-fA-F]{2})*$`)
)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func tzOK(tz string) bool {
	if tz == "" || tz == "Z" {
		return true
	}
	h, m := atoi(tz[1:3]), atoi(tz[4:6])
	return m < 60 && (h < 14 || (h == 14 && m == 0))
}

func dateOK(y, mo, d string) bool {
	year, month, day := atoi(y), atoi(mo), atoi(d)
	return strings.TrimLeft(y, "-") != "0000" && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
}

func timeOK(h, m, s, frac string) bool {
	hh, mm, ss := atoi(h), atoi(m), atoi(s)
	if hh == 24 {
		return mm == 0 && ss == 0 && strings.Trim(frac, ".0") == ""
	}
	return hh < 24 && mm < 60 && ss < 60
}

func tzLoc(tz string) *time.Location {
	if tz == "" || tz == "Z" {
		return time.UTC
	}
	off := (atoi(tz[1:3])*60 + atoi(tz[4:6])) * 60
	if tz[0] == '-' {
		off = -off
	}
	return time.FixedZone(tz, off)
}

func nanos(frac string) int {
	if frac == "" {
		return 0
	}
	f, _ := strconv.ParseFloat("0"+frac, 64)
	return int(f * 1e9)
}

// toTime reads a valid dateTime, date or time (a time on a fixed day);
// no timezone is taken as UTC.
func toTime(prim, v string) (time.Time, bool) {
	switch prim {
	case "dateTime":
		m := reDateTime.FindStringSubmatch(v)
		if m == nil {
			return time.Time{}, false
		}
		return time.Date(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6]), nanos(m[7]), tzLoc(m[8])), true
	case "date":
		m := reDate.FindStringSubmatch(v)
		if m == nil {
			return time.Time{}, false
		}
		return time.Date(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), 0, 0, 0, 0, tzLoc(m[4])), true
	case "time":
		m := reTime.FindStringSubmatch(v)
		if m == nil {
			return time.Time{}, false
		}
		return time.Date(2000, 1, 1, atoi(m[1]), atoi(m[2]), atoi(m[3]), nanos(m[4]), tzLoc(m[5])), true
	}
	return time.Time{}, false
}

func lexDateTime(v string, _ *etree.Element) (bool, string) {
	m := reDateTime.FindStringSubmatch(v)
	return m != nil && dateOK(m[1], m[2], m[3]) && timeOK(m[4], m[5], m[6], m[7]) && tzOK(m[8]), ""
}

func lexDate(v string, _ *etree.Element) (bool, string) {
	m := reDate.FindStringSubmatch(v)
	return m != nil && dateOK(m[1], m[2], m[3]) && tzOK(m[4]), ""
}

func lexTime(v string, _ *etree.Element) (bool, string) {
	m := reTime.FindStringSubmatch(v)
	return m != nil && timeOK(m[1], m[2], m[3], m[4]) && tzOK(m[5]), ""
}

func lexDuration(v string, _ *etree.Element) (bool, string) {
	_, err := ParseDuration(v)
	return err == nil, ""
}

func lexRe(re *regexp.Regexp) func(string, *etree.Element) (bool, string) {
	return func(v string, _ *etree.Element) (bool, string) { return re.MatchString(v), "" }
}

func lexGYM(v string, _ *etree.Element) (bool, string) {
	m := reGYM.FindStringSubmatch(v)
	return m != nil && atoi(m[1]) >= 1 && atoi(m[1]) <= 12 && tzOK(m[2]), ""
}

func lexGMonth(v string, _ *etree.Element) (bool, string) {
	m := reGMonth.FindStringSubmatch(v)
	return m != nil && atoi(m[1]) >= 1 && atoi(m[1]) <= 12 && tzOK(m[2]), ""
}

func lexGMD(v string, _ *etree.Element) (bool, string) {
	m := reGMD.FindStringSubmatch(v)
	return m != nil && atoi(m[1]) >= 1 && atoi(m[1]) <= 12 && atoi(m[2]) >= 1 && atoi(m[2]) <= daysIn(2000, atoi(m[1])) && tzOK(m[3]), ""
}

func lexGDay(v string, _ *etree.Element) (bool, string) {
	m := reGDay.FindStringSubmatch(v)
	return m != nil && atoi(m[1]) >= 1 && atoi(m[1]) <= 31 && tzOK(m[2]), ""
}

func lexBoolean(v string, _ *etree.Element) (bool, string) {
	return v == "true" || v == "false" || v == "1" || v == "0", ""
}

func lexFloat(bits int) func(string, *etree.Element) (bool, string) {
	return func(v string, _ *etree.Element) (bool, string) {
		if !reFloat.MatchString(v) {
			return false, ""
		}
		if v == "INF" || v == "-INF" || v == "NaN" {
			return true, ""
		}
		_, err := strconv.ParseFloat(v, bits)
		return err == nil, " (out of range)"
	}
}

func lexBase64(v string, _ *etree.Element) (bool, string) {
	_, err := base64.StdEncoding.DecodeString(stripSpace(v))
	return err == nil, ""
}

func lexQName(v string, ctx *etree.Element) (bool, string) {
	prefix, local, found := strings.Cut(v, ":")
	if !found {
		return reNCName.MatchString(v), ""
	}
	if !reNCName.MatchString(prefix) || !reNCName.MatchString(local) {
		return false, ""
	}
	if ctx != nil && prefix != "xml" {
		if _, _, err := xmldoc.ResolveQName(ctx, v, false); err != nil {
			return false, fmt.Sprintf(" (prefix %q is not declared)", prefix)
		}
	}
	return true, ""
}

// lexInteger checks an integer in [lo, hi] (nil: unbounded).
func lexInteger(lo, hi *big.Int) func(string, *etree.Element) (bool, string) {
	return func(v string, _ *etree.Element) (bool, string) {
		if !reInteger.MatchString(v) {
			return false, ""
		}
		if lo == nil && hi == nil {
			return true, ""
		}
		n, _ := new(big.Int).SetString(strings.TrimPrefix(v, "+"), 10)
		if (lo != nil && n.Cmp(lo) < 0) || (hi != nil && n.Cmp(hi) > 0) {
			return false, " (out of range)"
		}
		return true, ""
	}
}

func bigInt(s string) *big.Int { n, _ := new(big.Int).SetString(s, 10); return n }

// builtinTypes makes the built-in types of XML Schema 1.0.
func builtinTypes() map[string]*Type {
	m := map[string]*Type{}
	add := func(name, prim string, ws wsMode, lex func(string, *etree.Element) (bool, string)) *simpleType {
		st := &simpleType{name: QName{NS, name}, prim: prim, ws: ws, lexical: lex}
		m[name] = &Type{Name: st.name, simple: st, state: filled}
		return st
	}
	add("anySimpleType", "anySimpleType", wsPreserve, nil)
	add("string", "string", wsPreserve, nil)
	add("normalizedString", "string", wsReplace, nil)
	for _, n := range []string{"token", "anyURI", "NOTATION"} {
		add(n, n, wsCollapse, nil)
	}
	if t := m["token"]; t != nil {
		t.simple.prim = "string"
	}
	add("language", "string", wsCollapse, lexRe(reLanguage))
	add("Name", "string", wsCollapse, lexRe(reName))
	for _, n := range []string{"NCName", "ID", "IDREF", "ENTITY"} {
		add(n, "string", wsCollapse, lexRe(reNCName))
	}
	add("NMTOKEN", "string", wsCollapse, lexRe(reNMToken))
	for n, item := range map[string]string{"NMTOKENS": "NMTOKEN", "IDREFS": "IDREF", "ENTITIES": "ENTITY"} {
		st := &simpleType{name: QName{NS, n}, variety: list, ws: wsCollapse, item: m[item].simple}
		r := &simpleType{name: st.name, variety: list, ws: wsCollapse, base: st,
			f: &facets{length: -1, minLen: 1, maxLen: -1, totalDigits: -1, fractionDigit: -1}}
		m[n] = &Type{Name: st.name, simple: r, state: filled}
	}
	add("boolean", "boolean", wsCollapse, lexBoolean)
	add("decimal", "decimal", wsCollapse, lexRe(reDecimal))
	ints := []struct {
		name   string
		lo, hi string
	}{
		{"integer", "", ""}, {"nonPositiveInteger", "", "0"}, {"negativeInteger", "", "-1"},
		{"long", "-9223372036854775808", "9223372036854775807"}, {"int", "-2147483648", "2147483647"},
		{"short", "-32768", "32767"}, {"byte", "-128", "127"}, {"nonNegativeInteger", "0", ""},
		{"unsignedLong", "0", "18446744073709551615"}, {"unsignedInt", "0", "4294967295"},
		{"unsignedShort", "0", "65535"}, {"unsignedByte", "0", "255"}, {"positiveInteger", "1", ""},
	}
	for _, i := range ints {
		var lo, hi *big.Int
		if i.lo != "" {
			lo = bigInt(i.lo)
		}
		if i.hi != "" {
			hi = bigInt(i.hi)
		}
		add(i.name, "decimal", wsCollapse, lexInteger(lo, hi))
	}
	add("float", "float", wsCollapse, lexFloat(32))
	add("double", "double", wsCollapse, lexFloat(64))
	add("duration", "duration", wsCollapse, lexDuration)
	add("dateTime", "dateTime", wsCollapse, lexDateTime)
	add("date", "date", wsCollapse, lexDate)
	add("time", "time", wsCollapse, lexTime)
	add("gYear", "gYear", wsCollapse, lexRe(reGYear))
	add("gYearMonth", "gYearMonth", wsCollapse, lexGYM)
	add("gMonth", "gMonth", wsCollapse, lexGMonth)
	add("gMonthDay", "gMonthDay", wsCollapse, lexGMD)
	add("gDay", "gDay", wsCollapse, lexGDay)
	add("hexBinary", "hexBinary", wsCollapse, lexRe(reHex))
	add("base64Binary", "base64Binary", wsCollapse, lexBase64)
	add("QName", "QName", wsCollapse, lexQName)
	anyWild := &wildcard{any: true, process: "lax"}
	m["anyType"] = &Type{Name: QName{NS, "anyType"}, complex: true, mixed: true, state: filled,
		content: &particle{kind: pAny, min: 0, max: -1, wc: anyWild}, wilds: []*wildcard{anyWild}, anyAttr: anyWild}
	return m
}
