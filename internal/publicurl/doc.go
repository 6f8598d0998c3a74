// Package publicurl computes the public base URL of a request:
// scheme://host[:port] (or the operator's --public-url) that the
// documents orchd serves about its endpoints, such as ?wsdl's
// soap:address, name so that a client reaches orchd where it reached it.
// It owns that rule and the validation of the Host and forwarded headers
// it reads (which are trusted only when the operator says a proxy sets
// them). It imports nothing of orchd, and must not: the front door (soap)
// and the commands that configure it use it.
package publicurl
