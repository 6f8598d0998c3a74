// Package deploy reads a bundle's deploy.xml (Apache ODE's format, with
// orchd's extensions in urn:orchd:deploy) into a Descriptor: per process,
// in-memory or persistent, the services its partner links provide and
// invoke, failure handling, idempotent operations, timeouts, basic
// credentials (passwords read from the bundle or the environment, never
// shown in errors), instance cleanup, events, the step budget and the
// partner address rules for addresses chosen at run time
// (orchd:partnerAllow, parsed by package partnerallow).
//
// It knows no BPEL activities and runs nothing. It imports xmldoc
// (positions, errors), wsdl (service references), exchange, events (the
// event categories) and xsd (durations); it must never import process,
// soap, persist or cmd.
package deploy
