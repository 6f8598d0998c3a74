// Package partnerallow owns the syntax and the matching of partner
// address rules: the entries of serve --partner-allow and of a bundle's
// deploy.xml orchd:partnerAllow, each a host name ("*.example.com" for
// its subdomains), an IP address or a CIDR prefix, and a port or a port
// range; and the addresses no rule has to forbid (loopback, link-local,
// metadata). It only parses and matches: where a policy is enforced (the
// partner client's dialer) and how the operator's and a bundle's rules
// combine is package soap's.
//
// It imports nothing of orchd; it must never import soap, process or
// cmd (deploy and soap both import it).
package partnerallow
