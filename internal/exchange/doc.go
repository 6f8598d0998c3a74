// Package exchange defines the message exchange: what travels between the
// SOAP front door, the process runtime and partner bindings.
//
// It is the leaf package of orchd. It owns the Exchange and Call values,
// the Message and Fault representations, the endpoint descriptors that the
// runtime hands to the front door (derived from WSDL bindings), and the two
// ports that connect the layers:
//
//   - Dispatcher: the front door calls it; the process runtime implements it.
//   - Partner: the runtime calls it; the SOAP client and in-process bindings
//     implement it.
//
// It starts no goroutines and does no I/O. It must never import soap,
// process, persist or cmd.
//
// # Message representation
//
// A Message is a WSDL message: one etree element per part, keyed by part
// name. An element-typed part holds the element itself (for example
// po:purchaseOrder); a type-typed part holds an element named after the part,
// with no namespace, whose content is the value. This is the shape BPEL's
// $var.part sees, so messages cross the boundary without re-serialization.
//
// Every part element is self-contained: each namespace prefix used in its
// subtree (element names, attribute names, and QName-valued content such as
// xsi:type) is declared on the part element or inside it. Whoever builds a
// Message (the envelope decoder, the runtime) guarantees this, so a part can
// be serialized or moved into another tree without its original ancestors.
// Messages handed to Dispatch (Exchange.Input) and returned by
// Partner.Invoke belong to the receiver. A part handed to Partner.Invoke or
// Respond still belongs to the sender, which may change it after the call
// returns: a binding that keeps it (the in-process one) copies it.
package exchange
