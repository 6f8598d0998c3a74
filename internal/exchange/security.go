package exchange

import "github.com/beevik/etree"

// Authenticator checks the WS-Security header of requests to a provided
// endpoint (deploy.xml's orchd:usernameToken; internal/wssec).
type Authenticator interface {
	// Authenticate checks the request's header blocks (secure: it came
	// over TLS). It returns the blocks it processed, which count as
	// understood, and the user; its error, for the log, never holds a
	// password, and the client learns only that authentication failed.
	Authenticate(headers []*etree.Element, secure bool) (understood []*etree.Element, user string, err error)
}

// SecurityHeader makes the WS-Security header block of each call to a
// partner (deploy.xml's orchd:usernameToken on an <invoke>).
type SecurityHeader interface {
	// SecurityHeader returns a new, self-contained header block for an
	// envelope of namespace envNS.
	SecurityHeader(envNS string) (*etree.Element, error)
}
