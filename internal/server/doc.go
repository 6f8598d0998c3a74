// Package server composes orchd's HTTP surface: the SOAP front door for
// every deployed endpoint, the process listing at /, /metrics, and, when
// it is given one, the management API's handler at /api/v1/ and
// /console/ (internal/admin, unless orchd serves it on --admin-listen). It owns
// routing between them and the listing page; it holds no engine or SOAP
// logic of its own. It also bounds the connections under that surface:
// LimitListener (at most so many open, the next refused at once) and
// BodyTimeout (a deadline on reading a request body, not on the exchange
// that follows).
//
// It may import soap, process and exchange; nothing imports it but cmd.
package server
