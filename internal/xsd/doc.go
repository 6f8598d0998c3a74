// Package xsd is a focused XML Schema 1.0 validator for the schemas that
// process bundles carry: the .xsd files and the inline <types><xsd:schema>
// of WSDLs, with xsd:import and xsd:include resolved inside the bundle.
//
// Load reads the schema documents into a Set; every global element and
// type is compiled once, so validation only reads the model and may run
// from many goroutines. Element and Type look a declaration up and check
// that everything it reaches is supported; Set.Validate and
// Set.ValidateType check an etree element against it and return the first
// violation as an *Error naming the instance path ("/po:order/po:item[2]/
// po:qty: '-3' is below minInclusive 1").
//
// Covered: complexType with sequence, choice and all (minOccurs,
// maxOccurs), element refs, named and anonymous types, model and
// attribute groups, simpleContent and complexContent extension and
// restriction, attributes (use, fixed, types), any and anyAttribute
// (processContents strict, lax, skip), nillable and xsi:nil, xsi:type, the
// built-in simple types, simpleType restriction with the facets
// enumeration, pattern (XSD regular expressions translated to Go's
// regexp), min/maxInclusive/Exclusive, length/minLength/maxLength,
// totalDigits/fractionDigits and whiteSpace, list and union.
//
// Not covered: substitution groups, identity constraints (key, keyref,
// unique), redefine, and patterns using Unicode block escapes or
// character class subtraction. A declaration that reaches one of them is
// reported by Element or Type as unsupported (ErrUnsupported); one that
// does not is unaffected, so a schema set may hold them as long as
// nothing validates against them.
//
// ParseDuration (duration.go) is the one reader of xsd:duration's lexical
// form: validation, XPath 2.0's casts and BPEL's <for> and <repeatEvery>
// all use it. The package imports only internal/process/xmldoc (positions).
package xsd
