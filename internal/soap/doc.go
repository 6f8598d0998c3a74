// Package soap is orchd's SOAP layer: the envelope codec (SOAP 1.1 and
// 1.2), the HTTP front door that turns requests into exchange.Exchange
// values for a Dispatcher, and the HTTP client that implements
// exchange.Partner for partners bound over SOAP/HTTP.
//
// # What it owns
//
//   - Envelopes and faults: DecodeEnvelope, EncodeEnvelope, EncodeFault.
//     Decoded header and body elements are detached from the envelope and
//     made self-contained (every namespace declaration in scope is copied
//     onto them), as the exchange package requires of message parts.
//     Whitespace-only text between elements (indentation) is not kept:
//     SOAP payloads are element-only content, and the runtime then copies
//     and walks trees half the size. An element whose only content is
//     whitespace keeps it. Requests and partner replies are parsed by
//     internal/xmlparse, in time linear in their size and within Limits
//     (ServerOptions.Limits, ClientOptions.Limits): a request over one is
//     refused with a Client fault naming the limit and its value (ErrLimit),
//     a DTD with a Client fault (ErrMalformed). Elements are written back by
//     writeElement, etree's default serialization without its per-name
//     strings.
//   - The mapping between a WSDL message (exchange.Message) and a SOAP body
//     for document/literal and rpc/literal operations, and the parts a
//     binding carries as header blocks (Operation.InputParts/OutputParts).
//     A request's header block addressed to orchd and marked
//     mustUnderstand that no part maps is answered with a MustUnderstand
//     fault. Partner replies are not checked for mustUnderstand.
//   - Server, an http.Handler serving endpoints: it caps the request size,
//     decodes the envelope, resolves the operation (body element first,
//     then SOAPAction), calls Dispatcher.Dispatch in the request's
//     goroutine and writes the reply through Exchange.Respond. Every
//     failure is turned into a SOAP fault by one function, faultFor. It also
//     serves ?wsdl with imports rewritten as references relative to the
//     endpoint and the soap:address of each port it serves naming the base
//     URL the request reached (internal/publicurl: Host, TLS, or the
//     operator's public URL or trusted forwarded headers).
//     With ServerOptions.MaxInflight it admits exchanges under a bound
//     (taken after the body is read, before it is parsed; a queue of at
//     most MaxQueue served in turn, a request in it shed after QueueWait
//     once it overflowed or after a second of standing still) and sheds
//     the rest with HTTP 503, Retry-After and a Server fault (ErrOverloaded), counted
//     in orchd_shed_total. The bound is either MaxInflight fixed slots
//     for the exchanges using the CPU (waits give theirs back:
//     exchange.Idler), or, with ServerOptions.Adaptive, an adaptive
//     limit on all exchanges admitted and not finished, which follows
//     their latency (one limiter for both, limiter.go). A connection
//     whose requests were shed in a row gets a growing pause before its
//     next one is considered, up to the Retry-After it was given
//     (Server.ConnContext, pace.go).
//   - WS-Addressing (wsa.go, wsa_server.go; 2005/08 and the 2004/08
//     submission): a request's wsa headers are understood (mustUnderstand
//     on them is no fault); one whose wsa:ReplyTo is not anonymous is
//     answered 202 before Dispatch and its reply, or fault (to
//     wsa:FaultTo when given), is POSTed there once Dispatch returns,
//     with wsa:RelatesTo and the EPR's reference parameters, through
//     ServerOptions.Callbacks under its partner address policy (narrowed
//     by CallbackRules), tried again where that is safe (connection
//     refused, 5xx, 429; ServerOptions.CallbackRetry, wsa_retry.go);
//     wsa:Action picks the operation where the body and SOAPAction do
//     not. Partner calls carry wsa:To, wsa:Action, wsa:MessageID, a
//     wsa:ReplyTo when Call.ReplyTo is set, and Endpoint.ReferenceParams
//     when Endpoint.Addressing is set or the endpoint has reference
//     parameters; other calls and replies are encoded as before, byte
//     for byte (testdata/calls).
//   - Client, which POSTs calls to partner endpoints over a keep-alive
//     connection pool (http or https, with the TLS configuration and the
//     endpoint's basic credentials) and maps declared SOAP faults back to
//     exchange.Fault. Each call is bounded by its Call.Timeout or the
//     client's; redirects are not followed; a reply over the size limit
//     is cut off with its connection. Every other failure is an error
//     naming the address, the operation and what went wrong (ErrPartner*
//     sentinels, ErrTooLarge). Calls to addresses chosen at run time
//     (AssignedPartner, AssignedPartnerUnder, and AssignedHTTPClient for
//     REST URIs) go under a PartnerPolicy
//     (policy.go, the rules being package partnerallow's), narrowed to a
//     bundle's rules on a transport of their own (assigned.go), and fail
//     alike: one text, at the call's deadline.
//
// # What it must never import
//
// soap knows nothing about BPEL. It imports exchange, xmlparse, partnerallow, redact, publicurl and the
// standard library, etree and the Prometheus client only; it must never import
// process, persist or cmd.
//
// # Caveats
//
// Message parts handed to the encoder (Respond, Partner.Invoke) are
// serialized in place and never modified or re-parented, so they must be
// self-contained. Dispatch runs in the request goroutine; Respond may be
// called from another goroutine but only until Dispatch returns, after
// which it is ignored (and logged).
package soap
