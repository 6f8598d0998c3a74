package redact

import (
	"errors"
	"net/url"
	"strings"
)

// mask replaces the user information (user:password) of an address.
const mask = "***"

// Address returns s, a URL or an address that may not parse, with the
// user information of its authority (everything before the last @ of the
// part after the "scheme://" that comes last before the first @, up to
// the first /, ? or #) shown as "***".
// Without "://", an authority whose user information holds a colon
// (user:password@host) keeps what comes before the colon:
// user:***@host. Text with no @ is returned as it is.
func Address(s string) string {
	from, to, ok := userinfo(s)
	if !ok {
		return s
	}
	return s[:from] + mask + s[to:]
}

// WithoutUserinfo is s with the user information Address masks left
// out, the @ after it too: http://host/x, for data a process reads.
func WithoutUserinfo(s string) string {
	if from, to, ok := userinfo(s); ok {
		return s[:from] + s[to+1:]
	}
	return s
}

// AddressNoQuery is WithoutUserinfo(s) with the query and fragment left
// out too: for span attributes, where a query may carry a token.
func AddressNoQuery(s string) string {
	s = WithoutUserinfo(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	return s
}

// userinfo finds the secret part of s's user information, s[from:to]
// (to is the index of the @ that ends it), as Address describes.
func userinfo(s string) (from, to int, ok bool) {
	first := strings.Index(s, "@")
	if first < 0 {
		return 0, 0, false
	}
	start := 0
	if i := strings.LastIndex(s[:first], "://"); i >= 0 {
		start = i + 3
	}
	auth := s[start:]
	if k := strings.IndexAny(auth, "/?#"); k >= 0 {
		auth = auth[:k]
	}
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return 0, 0, false
	}
	if start == 0 {
		// No scheme: only user:password@ is a secret, and the user
		// (or a scheme without //, as in mailto:) stays.
		colon := strings.Index(auth[:at], ":")
		if colon < 0 {
			return 0, 0, false // user@host, no password: an e-mail address, say
		}
		return colon + 1, at, true
	}
	return start, start + at, true
}

// Text returns s, a free text such as an error message or a fault
// reason, with every address in it redacted as Address does. An address
// is a run of text between spaces, quotes or angle brackets.
func Text(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		end := strings.IndexAny(s, " \t\r\n\"'<>`")
		if end < 0 {
			end = len(s)
		}
		b.WriteString(Address(s[:end]))
		if end < len(s) {
			b.WriteByte(s[end])
			end++
		}
		s = s[end:]
	}
	return b.String()
}

// Parse is url.Parse of Address(s)'s text in errors: a parse error
// quotes the redacted address, never the raw one (url.Error.URL holds
// the string it was given). The URL it returns keeps the credentials,
// to be used, not shown.
func Parse(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	return u, Error(err)
}

// Error returns err with the address of every *url.Error in its chain
// redacted (in place: such an error is built for one call and not
// shared). Other errors are returned as they are.
func Error(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = Address(ue.URL)
		ue.Err = Error(ue.Err)
	}
	return err
}
