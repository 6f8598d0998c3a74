// Package redact takes the credentials out of partner addresses and of
// text that quotes them, at the string level: it works on addresses that
// do not parse as URLs too, so it runs before an address is parsed,
// quoted or logged (soap, endpoints, the interpreter's endpoint
// references, lint). It owns only that rule; it imports nothing of
// orchd, and must not: every layer that handles an address uses it.
package redact
