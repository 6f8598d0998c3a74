// Package epr reads and writes WS-BPEL endpoint references (WS-BPEL 2.0
// sections 6 and 8.4). A <copy> from a partner link yields a
// sref:service-ref wrapping a WS-Addressing wsa:EndpointReference
// (ServiceRef, WithParams); a <copy> to a partner link takes the address
// out of what its <from> produced (Parse), as Apache ODE's
// EndpointFactory did: a service-ref, a wsa:EndpointReference (2005/08 or
// the 2004/08 submission), a wsdl:service with a soap:address, or plain
// URL text (CheckAddress). The interpreter makes that address the
// partner role's endpoint for the partner link instance.
//
// Reference parameters (WS-BPEL 2.0 section 6.3, WS-Addressing 1.0 Core
// section 3.3): the children of a wsa:EndpointReference's
// wsa:ReferenceParameters (and of the 2004/08 submission's
// wsa:ReferenceProperties) are kept with the address as self-contained
// copies; every call to the address sends them as header blocks. Encode
// and Decode are their checkpoint form: the address, then, when there
// are parameters, a NUL byte (no address holds one) and the parameters
// in a <p> wrapper; a stored address alone decodes as itself.
//
// It owns only these XML shapes: no instance state, no I/O. It imports
// xmldoc's namespace names, xmlparse and redact (an address is redacted
// before an error quotes it), and must not import the interpreter or the
// engine.
package epr
