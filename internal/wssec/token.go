package wssec

import (
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // PasswordDigest is SHA-1 by the UsernameToken Profile
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/beevik/etree"
	"golang.org/x/crypto/bcrypt"
)

// The namespaces and URIs of WSS 1.0/1.1 and its UsernameToken Profile.
const (
	NSSecExt      = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	NSUtility     = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	TypeText      = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText"
	TypeDigest    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
	EncodingB64   = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"
	timeLayout    = "2006-01-02T15:04:05.000Z"
	defaultWindow = 5 * time.Minute
)

// ErrFailedAuthentication is what every refused token's error wraps:
// the front door answers it with the wsse:FailedAuthentication fault,
// and says no more to the client than that.
var ErrFailedAuthentication = errors.New("wsse:FailedAuthentication")

// AuthError is a refused token: the user it named (if any) and why,
// for the log. It never holds a password.
type AuthError struct {
	User   string
	Reason string
	// Busy is set when the check was not made: the Gate's slots were
	// all taken.
	Busy bool
}

// Unavailable reports a check refused for want of a Gate slot (the
// front door's 503), not a token found wrong.
func (e *AuthError) Unavailable() bool { return e.Busy }

func (e *AuthError) Error() string {
	if e.User == "" {
		return "WS-Security authentication failed: " + e.Reason
	}
	return fmt.Sprintf("WS-Security authentication of user %q failed: %s", e.User, e.Reason)
}

// Unwrap makes an AuthError an ErrFailedAuthentication.
func (e *AuthError) Unwrap() error { return ErrFailedAuthentication }

// Policy is what a provided endpoint requires.
type Policy struct {
	// Credentials are the users accepted.
	Credentials *Credentials
	// Text and Digest say which password types are accepted
	// (PasswordText only over TLS).
	Text, Digest bool
	// Window bounds the age of a token's Created and a Timestamp's
	// Created (and how far in the future they may be, for clock skew);
	// a nonce is remembered this long. Zero means 5 minutes.
	Window time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Replay remembers the nonces of authentic tokens (replay.go); nil
	// means a store in this Authenticator's memory. Several
	// Authenticators (several orchd nodes) sharing one store refuse a
	// token replayed to any of them.
	Replay ReplayStore
	// Checks bounds the password checks running at once, shared by
	// the Authenticators of a server; nil bounds nothing.
	Checks *Gate
}

// Authenticator checks the wsse:Security header of requests. It is safe
// for concurrent use.
type Authenticator struct {
	p Policy
	// texts caches, by user, a hash of the PasswordText last verified
	// against a bcrypt hash, so that a client sending the same password
	// costs one bcrypt comparison per textTTL, not one per request.
	mu    sync.Mutex
	texts map[string]textOK
	// dummy is compared against for an unknown user and after a wrong
	// {PLAIN} secret, so that every refused PasswordText takes as long
	// as a bcrypt user's.
	dummy []byte
}

type textOK struct {
	sum   [32]byte
	until time.Time
}

// textTTL is how long a verified PasswordText is cached.
const textTTL = time.Minute

// NewAuthenticator returns an Authenticator enforcing p.
func NewAuthenticator(p Policy) *Authenticator {
	if p.Window <= 0 {
		p.Window = defaultWindow
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Replay == nil {
		p.Replay = &memoryReplay{now: p.Now}
	}
	a := &Authenticator{p: p, texts: map[string]textOK{}}
	// A hash of no password anyone knows, as costly as the users' (a
	// password under 72 bytes cannot fail).
	cost := bcrypt.MinCost
	if p.Credentials != nil {
		for _, c := range p.Credentials.users {
			if n, err := bcrypt.Cost(c.hash); err == nil && n > cost {
				cost = n
			}
		}
	}
	var pw [32]byte
	_, _ = rand.Read(pw[:])
	a.dummy, _ = bcrypt.GenerateFromPassword([]byte(base64.RawStdEncoding.EncodeToString(pw[:])), cost)
	return a
}

// Authenticate checks the wsse:Security header block among headers
// (secure: the request came over TLS). It returns that block, which the
// caller then counts as understood, and the user; a refusal is an
// *AuthError.
func (a *Authenticator) Authenticate(headers []*etree.Element, secure bool) ([]*etree.Element, string, error) {
	var sec *etree.Element
	for _, h := range headers {
		if h.Tag == "Security" && h.NamespaceURI() == NSSecExt {
			if sec != nil {
				return nil, "", &AuthError{Reason: "more than one wsse:Security header"}
			}
			sec = h
		}
	}
	if sec == nil {
		return nil, "", &AuthError{Reason: "no wsse:Security header"}
	}
	now := a.p.Now()
	var tok *etree.Element
	for _, c := range sec.ChildElements() {
		switch {
		case c.Tag == "UsernameToken" && c.NamespaceURI() == NSSecExt:
			if tok != nil {
				return nil, "", &AuthError{Reason: "more than one wsse:UsernameToken"}
			}
			tok = c
		case c.Tag == "Timestamp" && c.NamespaceURI() == NSUtility:
			if err := a.checkTimestamp(c, now); err != nil {
				return nil, "", err
			}
		}
	}
	if tok == nil {
		return nil, "", &AuthError{Reason: "no wsse:UsernameToken in the wsse:Security header"}
	}
	user, err := a.checkToken(tok, secure, now)
	if err != nil {
		return nil, user, err
	}
	return []*etree.Element{sec}, user, nil
}

// checkTimestamp checks a wsu:Timestamp: Created not in the future (past
// the window's skew) nor older than the window, Expires not past.
func (a *Authenticator) checkTimestamp(ts *etree.Element, now time.Time) error {
	if c := child(ts, NSUtility, "Created"); c != nil {
		t, err := parseTime(c.Text())
		if err != nil {
			return &AuthError{Reason: "wsu:Timestamp: Created: " + err.Error()}
		}
		if e := a.fresh(t, now, "wsu:Timestamp"); e != nil {
			return e
		}
	}
	if e := child(ts, NSUtility, "Expires"); e != nil {
		t, err := parseTime(e.Text())
		if err != nil {
			return &AuthError{Reason: "wsu:Timestamp: Expires: " + err.Error()}
		}
		if !now.Before(t) {
			return &AuthError{Reason: fmt.Sprintf("wsu:Timestamp expired at %s", t.Format(timeLayout))}
		}
	}
	return nil
}

// fresh checks that t is within the window around now.
func (a *Authenticator) fresh(t, now time.Time, what string) *AuthError {
	switch {
	case t.After(now.Add(a.p.Window)):
		return &AuthError{Reason: fmt.Sprintf("%s Created %s is in the future", what, t.Format(timeLayout))}
	case t.Before(now.Add(-a.p.Window)):
		return &AuthError{Reason: fmt.Sprintf("%s Created %s is older than %s (stale)", what, t.Format(timeLayout), a.p.Window)}
	}
	return nil
}

// checkToken checks a UsernameToken and returns its user.
func (a *Authenticator) checkToken(tok *etree.Element, secure bool, now time.Time) (string, error) {
	ue := child(tok, NSSecExt, "Username")
	pe := child(tok, NSSecExt, "Password")
	if ue == nil || pe == nil {
		return "", &AuthError{Reason: "the UsernameToken has no Username or no Password"}
	}
	user := strings.TrimSpace(ue.Text())
	typ := strings.TrimSpace(pe.SelectAttrValue("Type", TypeText))
	var nonce []byte
	if ne := child(tok, NSSecExt, "Nonce"); ne != nil {
		if enc := ne.SelectAttrValue("EncodingType", EncodingB64); enc != EncodingB64 {
			return user, &AuthError{User: user, Reason: "Nonce EncodingType " + enc + " (want Base64Binary)"}
		}
		var err error
		if nonce, err = base64.StdEncoding.DecodeString(strings.TrimSpace(ne.Text())); err != nil || len(nonce) == 0 {
			return user, &AuthError{User: user, Reason: "the Nonce is not base64"}
		}
	}
	var created string
	if ce := child(tok, NSUtility, "Created"); ce != nil {
		created = strings.TrimSpace(ce.Text())
		t, err := parseTime(created)
		if err != nil {
			return user, &AuthError{User: user, Reason: "Created: " + err.Error()}
		}
		if e := a.fresh(t, now, "the UsernameToken's"); e != nil {
			e.User = user
			return user, e
		}
	}
	cr, known := a.p.Credentials.users[user]
	switch typ {
	case TypeDigest:
		if !a.p.Digest {
			return user, &AuthError{User: user, Reason: "PasswordDigest is not accepted here"}
		}
		if nonce == nil || created == "" {
			return user, &AuthError{User: user, Reason: "a PasswordDigest needs a Nonce and a Created"}
		}
		if !known {
			return user, &AuthError{User: user, Reason: "unknown user"}
		}
		if cr.plain == nil {
			return user, &AuthError{User: user, Reason: "the credentials file holds a bcrypt hash for this user: PasswordDigest needs a {PLAIN} secret"}
		}
		if !digestOK(nonce, created, cr.plain, strings.TrimSpace(pe.Text())) {
			return user, &AuthError{User: user, Reason: "wrong password"}
		}
	case TypeText:
		if !a.p.Text {
			return user, &AuthError{User: user, Reason: "PasswordText is not accepted here"}
		}
		if !secure {
			return user, &AuthError{User: user, Reason: "PasswordText over plain HTTP (it needs TLS)"}
		}
		ok, err := a.textOK(user, cr, known, pe.Text(), now)
		if err != nil {
			return user, err
		}
		if !ok {
			if !known {
				return user, &AuthError{User: user, Reason: "unknown user"}
			}
			return user, &AuthError{User: user, Reason: "wrong password"}
		}
	default:
		return user, &AuthError{User: user, Reason: "unknown password Type " + typ}
	}
	// Authentic: a nonce seen within the window is a replay. Created
	// may be up to a window ahead or behind: remembered for two.
	if nonce != nil {
		seen, err := a.p.Replay.Add(replayKey(user, nonce), now.Add(2*a.p.Window))
		switch {
		case err != nil:
			return user, &AuthError{User: user, Reason: "the nonce could not be checked against the replay store: " + err.Error()}
		case seen:
			return user, &AuthError{User: user, Reason: "the nonce was seen before (a replayed token)"}
		}
	}
	return user, nil
}

// digestOK checks a PasswordDigest: Base64(SHA-1(nonce + created +
// password)).
func digestOK(nonce []byte, created string, secret []byte, got string) bool {
	return subtle.ConstantTimeCompare([]byte(Digest(nonce, created, secret)), []byte(got)) == 1
}

// Digest is the PasswordDigest of a token with nonce, created and secret.
func Digest(nonce []byte, created string, secret []byte) string {
	h := sha1.New() //nolint:gosec // the profile's algorithm
	h.Write(nonce)
	h.Write([]byte(created))
	h.Write(secret)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// textOK checks a PasswordText against the user's credential. Every
// refusal costs one bcrypt comparison (the dummy's for an unknown user
// and a wrong {PLAIN} secret), in a slot of the Gate: an unknown user, a
// {PLAIN} one and a bcrypt one take as long to refuse.
func (a *Authenticator) textOK(user string, cr credential, known bool, pw string, now time.Time) (bool, error) {
	dummy := func() bool {
		_ = bcrypt.CompareHashAndPassword(a.dummy, []byte(pw))
		return false
	}
	switch {
	case !known:
		return a.p.Checks.run(user, dummy)
	case cr.plain != nil:
		if subtle.ConstantTimeCompare(cr.plain, []byte(pw)) == 1 {
			return true, nil
		}
		return a.p.Checks.run(user, dummy)
	}
	sum := sha256.Sum256([]byte(pw))
	a.mu.Lock()
	c, ok := a.texts[user]
	a.mu.Unlock()
	if ok && now.Before(c.until) && subtle.ConstantTimeCompare(c.sum[:], sum[:]) == 1 {
		return true, nil
	}
	ok, err := a.p.Checks.run(user, func() bool { return bcrypt.CompareHashAndPassword(cr.hash, []byte(pw)) == nil })
	if !ok || err != nil {
		return false, err
	}
	a.mu.Lock()
	a.texts[user] = textOK{sum: sum, until: now.Add(textTTL)}
	a.mu.Unlock()
	return true, nil
}

// child is e's first child element named {space}local.
func child(e *etree.Element, space, local string) *etree.Element {
	for _, c := range e.ChildElements() {
		if c.Tag == local && c.NamespaceURI() == space {
			return c
		}
	}
	return nil
}

// parseTime reads an xsd:dateTime; one without a zone is UTC.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an xsd:dateTime", s)
}
