package soap

import "errors"

// Errors returned by the envelope codec. They are wrapped with details
// (line numbers, names); test for them with errors.Is. Their texts carry no
// package prefix because the front door sends them to requesters as fault
// reasons.
var (
	// ErrMalformed means the input is not well-formed XML (or is empty).
	ErrMalformed = errors.New("malformed XML")
	// ErrLimit means the input is over one of the parsing Limits; the
	// error names the limit and its value.
	ErrLimit = errors.New("input limit exceeded")
	// ErrNotEnvelope means the document element is not a SOAP Envelope.
	ErrNotEnvelope = errors.New("not a SOAP envelope")
	// ErrVersionMismatch means the Envelope is in neither the SOAP 1.1 nor
	// the SOAP 1.2 namespace.
	ErrVersionMismatch = errors.New("version mismatch")
	// ErrNoBody means the envelope has no Body.
	ErrNoBody = errors.New("envelope has no Body")
	// ErrMessage means a SOAP body does not match the operation's message
	// (a missing or unexpected part, a wrong rpc wrapper), or a message
	// handed to the encoder lacks a part.
	ErrMessage = errors.New("message does not match operation")
	// ErrMustUnderstand means a request carries a header block addressed
	// to orchd and marked mustUnderstand that the operation's binding maps
	// to no message part.
	ErrMustUnderstand = errors.New("header not understood")
)

// Errors of the front door (Server).
var (
	// ErrPathTaken is returned by Server.Handle when an endpoint is already
	// served at that path.
	ErrPathTaken = errors.New("soap: path already served")
	// ErrUnknownPath means no endpoint is served at the request path.
	ErrUnknownPath = errors.New("no endpoint at path")
	// ErrUnknownOperation means the request could not be matched to an
	// operation of the endpoint.
	ErrUnknownOperation = errors.New("unknown operation")
	// ErrContentType means the request's content type is not a SOAP one or
	// does not match the endpoint's or the envelope's SOAP version.
	ErrContentType = errors.New("unsupported content type")
	// ErrTooLarge means the request body exceeds ServerOptions.MaxBodyBytes
	// (or a response ClientOptions.MaxResponseBytes).
	ErrTooLarge = errors.New("message too large")
	// ErrNoReply means a request-response exchange finished without the
	// process replying.
	ErrNoReply = errors.New("process completed without replying")
	// ErrInternal means the dispatcher panicked.
	ErrInternal = errors.New("internal error")
	// ErrOverloaded names the fault of a request shed because
	// ServerOptions.MaxInflight exchanges were in flight.
	ErrOverloaded = errors.New("server overloaded")
)

// Errors of the partner client (Client).
var (
	// ErrPartnerFault means a partner answered with a SOAP fault that is not
	// one of the operation's declared faults.
	ErrPartnerFault = errors.New("answered fault")
	// ErrPartnerResponse means a partner's answer was not a usable SOAP
	// response (unexpected HTTP status, not an envelope, wrong message).
	ErrPartnerResponse = errors.New("bad response")
	// ErrPartnerTimeout means a partner did not answer within the call's
	// timeout.
	ErrPartnerTimeout = errors.New("timed out")
	// ErrPartnerUnreachable means no connection to the partner could be
	// made: its host does not resolve, it refuses connections, or the TLS
	// handshake failed.
	ErrPartnerUnreachable = errors.New("unreachable")
)
