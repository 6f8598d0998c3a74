// Package wsdl loads the WSDL 1.1 documents of a deployment bundle for the
// compiler: messages, port types and their operations, services and
// their SOAP 1.1/1.2 bindings (styles, parts, headers), BPEL's
// partnerLinkType and varprop extensions (properties and property
// aliases), the XSD imports, and, the first time a process validates, the
// bundle's schemas (Set.Schemas, through internal/xsd). Every problem is
// added to the bundle's xmldoc.Errors with its file and line.
//
// It describes services only: it knows nothing of BPEL activities or of
// running instances. It imports exchange (operation and message
// descriptions), xmldoc (positions, errors, namespaces) and xsd; it must
// never import process, soap, persist or cmd.
package wsdl
