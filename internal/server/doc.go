// Package server composes orchd's HTTP surface: the SOAP front door for
// every deployed endpoint, the process listing at /, and /metrics. It owns
// routing between them and the listing page; it holds no engine or SOAP
// logic of its own. It also bounds the connections under that surface:
// LimitListener (at most so many open, the next refused at once) and
// BodyTimeout (a deadline on reading a request body, not on the exchange
// that follows).
//
// It may import soap, process and exchange; nothing imports it but cmd.
package server
