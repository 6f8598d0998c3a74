// Package odemock serves the two partners built into Apache ODE's bpel-test
// harness, over real SOAP/HTTP, so ODE's conformance corpus
// (testdata/ode-corpus) can run against orchd.
//
// ODE routed partner invocations by portType, whatever service deploy.xml
// named; orchd's --endpoints file (package endpoints) does the same with
// "portType" rules pointing at these handlers:
//
//   - Probe serves {http://ode/bpel/unit-test/ProbeService.wsdl}probeMessagePT,
//     operation probe: it echoes the probeMessage (parts probeName and
//     probeData) with probeData set to probeData + " -> " + probeName.
//   - Fault serves {http://ode/bpel/unit-test/FaultService.wsdl}faultMessagePT,
//     operation throwFault: it always answers with a fault carrying the
//     errorMessage errorID "FA-1" and errorText = the request's faultData.
//     The fault is FaultMessage1 if faultIndicator1 is "yes", else
//     FaultMessage2 if faultIndicator2 is "yes", else UnKnownFault (the
//     spelling ODE's harness used; the WSDL declares UnknownFault).
//
// # Wire format
//
// Both WSDLs declare type-typed parts and a binding with no SOAP elements
// (FaultService has no binding at all), which orchd binds as SOAP 1.1
// document/literal: each part is a body child named after the part, with
// no namespace. The handlers accept that, and also an rpc/literal wrapper
// element holding the part accessors; they answer in the shape they were
// sent, in the request's SOAP version.
//
// A fault is a SOAP fault whose faultcode (SOAP 1.2: Code/Subcode) is the
// fault's QName in the FaultService namespace, whose faultstring names it,
// and whose detail holds the errorMessage parts (errorID, errorText) as
// orchd's own front door writes a declared fault's parts.
package odemock
