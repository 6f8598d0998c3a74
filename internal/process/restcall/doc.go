// Package restcall is the HTTP client of ODE's REST extension
// activities (bpel4restlight): it sends a request the interpreter built
// from an instance's variables, bounded in time and in the size of the
// response, under the partner address policy when the address came from
// a variable, and traces it. The interpreter (internal/process/interp)
// builds the request and stores the response; this package knows
// nothing of instances.
//
// It must not import the interpreter, the engine, the compiler or
// anything that knows BPEL; only internal/exchange (the front door's
// Idler), internal/partnerallow and internal/redact.
package restcall
