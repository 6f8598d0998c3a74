package xpath2

// XSNamespace is the XML Schema namespace, home of the atomic type names.
const XSNamespace = "http://www.w3.org/2001/XMLSchema"

// FnNamespace is the namespace of the standard function library.
const FnNamespace = "http://www.w3.org/2005/xpath-functions"

// Type is an atomic (or, for a few names such as xs:anyType, a complex)
// schema type known to the evaluator. Types are immutable and compared by
// identity.
type Type struct {
	// Name is the local name in the XML Schema namespace.
	Name string
	// Parent is the base type (nil for xs:anyType).
	Parent *Type
	prim   *Type // primitive ancestor (self for primitives)
	// abstract types cannot be the target of a cast.
	abstract bool
	// integer subtypes: bounds (nil = unbounded)
	min, max *string
}

// Primitive returns the primitive type this type derives from (itself for
// a primitive type).
func (t *Type) Primitive() *Type { return t.prim }

// DerivesFrom reports whether t is u or derives from u.
func (t *Type) DerivesFrom(u *Type) bool {
	for x := t; x != nil; x = x.Parent {
		if x == u {
			return true
		}
	}
	return false
}

func (t *Type) String() string { return "xs:" + t.Name }

func bound(s string) *string { return &s }

func newType(name string, parent *Type, primitive bool) *Type {
	t := &Type{Name: name, Parent: parent}
	if primitive || parent == nil {
		t.prim = t
	} else {
		t.prim = parent.prim
	}
	return t
}

// The built-in types. They are package-level immutable values.
var (
	TAnyType       = newType("anyType", nil, true)
	TAnySimpleType = newType("anySimpleType", TAnyType, true)
	TUntyped       = newType("untyped", TAnyType, true)
	TAnyAtomic     = newType("anyAtomicType", TAnySimpleType, true)
	TUntypedAtomic = newType("untypedAtomic", TAnyAtomic, true)
	TString        = newType("string", TAnyAtomic, true)
	TNormalized    = newType("normalizedString", TString, false)
	TToken         = newType("token", TNormalized, false)
	TLanguage      = newType("language", TToken, false)
	TNMTOKEN       = newType("NMTOKEN", TToken, false)
	TName          = newType("Name", TToken, false)
	TNCName        = newType("NCName", TName, false)
	TID            = newType("ID", TNCName, false)
	TIDREF         = newType("IDREF", TNCName, false)
	TENTITY        = newType("ENTITY", TNCName, false)
	TBoolean       = newType("boolean", TAnyAtomic, true)
	TDecimal       = newType("decimal", TAnyAtomic, true)
	TInteger       = newType("integer", TDecimal, false)
	TNonPosInt     = intType("nonPositiveInteger", TInteger, "", "0")
	TNegInt        = intType("negativeInteger", TNonPosInt, "", "-1")
	TLong          = intType("long", TInteger, "-9223372036854775808", "9223372036854775807")
	TInt           = intType("int", TLong, "-2147483648", "2147483647")
	TShort         = intType("short", TInt, "-32768", "32767")
	TByte          = intType("byte", TShort, "-128", "127")
	TNonNegInt     = intType("nonNegativeInteger", TInteger, "0", "")
	TUnsignedLong  = intType("unsignedLong", TNonNegInt, "0", "18446744073709551615")
	TUnsignedInt   = intType("unsignedInt", TUnsignedLong, "0", "4294967295")
	TUnsignedShort = intType("unsignedShort", TUnsignedInt, "0", "65535")
	TUnsignedByte  = intType("unsignedByte", TUnsignedShort, "0", "255")
	TPosInt        = intType("positiveInteger", TNonNegInt, "1", "")
	TFloat         = newType("float", TAnyAtomic, true)
	TDouble        = newType("double", TAnyAtomic, true)
	TDuration      = newType("duration", TAnyAtomic, true)
	TDayTimeDur    = newType("dayTimeDuration", TDuration, false)
	TYearMonthDur  = newType("yearMonthDuration", TDuration, false)
	TDateTime      = newType("dateTime", TAnyAtomic, true)
	TTime          = newType("time", TAnyAtomic, true)
	TDate          = newType("date", TAnyAtomic, true)
	TGYearMonth    = newType("gYearMonth", TAnyAtomic, true)
	TGYear         = newType("gYear", TAnyAtomic, true)
	TGMonthDay     = newType("gMonthDay", TAnyAtomic, true)
	TGDay          = newType("gDay", TAnyAtomic, true)
	TGMonth        = newType("gMonth", TAnyAtomic, true)
	THexBinary     = newType("hexBinary", TAnyAtomic, true)
	TBase64Binary  = newType("base64Binary", TAnyAtomic, true)
	TAnyURI        = newType("anyURI", TAnyAtomic, true)
	TQName         = newType("QName", TAnyAtomic, true)
	TNOTATION      = newType("NOTATION", TAnyAtomic, true)
	// list types: known names, never the result of an expression.
	TNMTOKENS = newType("NMTOKENS", TAnySimpleType, true)
	TIDREFS   = newType("IDREFS", TAnySimpleType, true)
	TENTITIES = newType("ENTITIES", TAnySimpleType, true)
)

func intType(name string, parent *Type, lo, hi string) *Type {
	t := newType(name, parent, false)
	if lo != "" {
		t.min = bound(lo)
	}
	if hi != "" {
		t.max = bound(hi)
	}
	return t
}

// builtinTypes maps the local names of the xs: types to the types. It is
// read-only after package initialisation.
var builtinTypes = func() map[string]*Type {
	m := map[string]*Type{}
	for _, t := range []*Type{TAnyType, TAnySimpleType, TUntyped, TAnyAtomic, TUntypedAtomic, TString,
		TNormalized, TToken, TLanguage, TNMTOKEN, TName, TNCName, TID, TIDREF, TENTITY, TBoolean,
		TDecimal, TInteger, TNonPosInt, TNegInt, TLong, TInt, TShort, TByte, TNonNegInt,
		TUnsignedLong, TUnsignedInt, TUnsignedShort, TUnsignedByte, TPosInt, TFloat, TDouble,
		TDuration, TDayTimeDur, TYearMonthDur, TDateTime, TTime, TDate, TGYearMonth, TGYear,
		TGMonthDay, TGDay, TGMonth, THexBinary, TBase64Binary, TAnyURI, TQName, TNOTATION,
		TNMTOKENS, TIDREFS, TENTITIES} {
		m[t.Name] = t
	}
	TAnyAtomic.abstract = true
	TNOTATION.abstract = true
	TAnySimpleType.abstract = true
	TAnyType.abstract = true
	TUntyped.abstract = true
	return m
}()

// LookupType returns the built-in type with the given local name in the
// XML Schema namespace.
func LookupType(local string) (*Type, bool) {
	t, ok := builtinTypes[local]
	return t, ok
}

func isNumericType(t *Type) bool {
	p := t.prim
	return p == TDecimal || p == TDouble || p == TFloat
}

func isAtomicType(t *Type) bool { return t.DerivesFrom(TAnyAtomic) }
