package wssec

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/beevik/etree"
)

// Signer makes the wsse:Security header of calls to a partner: a
// UsernameToken (a PasswordDigest with a fresh nonce, or a PasswordText)
// and a wsu:Timestamp. It is safe for concurrent use.
type Signer struct {
	User     string
	Password string
	// Digest sends a PasswordDigest, else a PasswordText.
	Digest bool
	// TTL is the Timestamp's life (Expires - Created); zero means 5
	// minutes.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// SecurityHeader returns a new wsse:Security header block for an
// envelope of namespace envNS, marked mustUnderstand, self-contained.
func (s *Signer) SecurityHeader(envNS string) (*etree.Element, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = defaultWindow
	}
	t := now().UTC()
	created := t.Format(timeLayout)
	sec := etree.NewElement("wsse:Security")
	sec.CreateAttr("xmlns:wsse", NSSecExt)
	sec.CreateAttr("xmlns:wsu", NSUtility)
	sec.CreateAttr("xmlns:soapenv", envNS)
	must := "1"
	if envNS == "http://www.w3.org/2003/05/soap-envelope" {
		must = "true"
	}
	sec.CreateAttr("soapenv:mustUnderstand", must)
	ts := sec.CreateElement("wsu:Timestamp")
	ts.CreateElement("wsu:Created").SetText(created)
	ts.CreateElement("wsu:Expires").SetText(t.Add(ttl).Format(timeLayout))
	tok := sec.CreateElement("wsse:UsernameToken")
	tok.CreateElement("wsse:Username").SetText(s.User)
	pw := tok.CreateElement("wsse:Password")
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("WS-Security nonce: %w", err)
	}
	if s.Digest {
		pw.CreateAttr("Type", TypeDigest)
		pw.SetText(Digest(nonce, created, []byte(s.Password)))
	} else {
		pw.CreateAttr("Type", TypeText)
		pw.SetText(s.Password)
	}
	n := tok.CreateElement("wsse:Nonce")
	n.CreateAttr("EncodingType", EncodingB64)
	n.SetText(base64.StdEncoding.EncodeToString(nonce))
	tok.CreateElement("wsu:Created").SetText(created)
	return sec, nil
}

// String names the signer without its password.
func (s *Signer) String() string {
	kind := "PasswordText"
	if s.Digest {
		kind = "PasswordDigest"
	}
	return fmt.Sprintf("UsernameToken %s of user %q", kind, s.User)
}
