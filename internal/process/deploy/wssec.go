package deploy

import (
	"path/filepath"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/bundlefs"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/wssec"
)

// orchd:usernameToken (WS-Security UsernameToken Profile 1.1). On a
// <provide>, requests must carry a token of a user of a credentials file
// of the bundle (wssec.LoadCredentials: mode 0600, bcrypt hashes or
// {PLAIN} secrets):
//
//	<provide partnerLink="client">
//	  <service .../>
//	  <orchd:usernameToken credentials="users.txt" passwordType="any" freshness="PT5M"/>
//	</provide>
//
// passwordType is digest, text (over TLS only) or any (the default);
// freshness bounds the age of a token's and a wsu:Timestamp's Created
// (default PT5M). On an <invoke>, every call carries a token and a
// Timestamp, the password from a file of the bundle or an environment
// variable, as orchd:basicAuth's:
//
//	<invoke partnerLink="crm">
//	  <service .../>
//	  <orchd:usernameToken user="orchd" passwordEnv="CRM_PASSWORD" passwordType="digest"/>
//	</invoke>
//
// passwordType is digest (the default) or text.

// ProvideToken is an orchd:usernameToken of a <provide>.
type ProvideToken struct {
	file         string
	text, digest bool
	window       time.Duration
	pos          xmldoc.Pos
	// Auth checks the requests, once ReadSecrets read the credentials.
	Auth *wssec.Authenticator
}

// InvokeToken is an orchd:usernameToken of an <invoke>.
type InvokeToken struct {
	secret secretRef
	digest bool
	// Signer makes the calls' headers, once ReadSecrets read the
	// password.
	Signer *wssec.Signer
}

const tokenTag = "orchd:usernameToken"

// parseProvideToken reads the orchd:usernameToken of a <provide>.
func parseProvideToken(doc *xmldoc.Document, x *etree.Element, errs *xmldoc.Errors) *ProvideToken {
	t := &ProvideToken{file: x.SelectAttrValue("credentials", ""), pos: doc.Pos(x), window: 5 * time.Minute}
	if t.file == "" {
		errs.Add(t.pos, tokenTag, "needs a credentials attribute: a file of the bundle (user:bcrypt-hash or user:{PLAIN}secret a line)")
	}
	switch pt := x.SelectAttrValue("passwordType", "any"); pt {
	case "any":
		t.text, t.digest = true, true
	case "text":
		t.text = true
	case "digest":
		t.digest = true
	default:
		errs.Add(t.pos, tokenTag, "passwordType must be digest, text or any, not %q", pt)
	}
	if a := x.SelectAttr("freshness"); a != nil {
		if d, ok := durationAt(t.pos, a.Value, tokenTag+" freshness", errs); ok {
			t.window = d
		}
	}
	return t
}

// parseInvokeToken reads the orchd:usernameToken of an <invoke>.
func parseInvokeToken(doc *xmldoc.Document, x *etree.Element, errs *xmldoc.Errors) *InvokeToken {
	t := &InvokeToken{secret: parseSecretRef(doc, x, tokenTag, errs), digest: true}
	switch pt := x.SelectAttrValue("passwordType", "digest"); pt {
	case "digest":
	case "text":
		t.digest = false
	default:
		errs.Add(t.secret.pos, tokenTag, "passwordType must be digest or text, not %q", pt)
	}
	return t
}

// readTokens reads the credentials and passwords the tokens of p name;
// the provided endpoints' Authenticators remember nonces in replay (nil:
// each in its own memory) and check passwords in checks' slots.
func (p *Process) readTokens(dir string, lim bundlefs.Limits, replay wssec.ReplayStore, checks *wssec.Gate, errs *xmldoc.Errors) {
	for _, t := range p.ProvideTokens {
		if t.file == "" {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(t.file)) {
			errs.Add(t.pos, tokenTag, "credentials %q must be a path inside the bundle", t.file)
			continue
		}
		creds, err := loadCredentials(dir, t.file, lim)
		if err != nil {
			errs.Add(t.pos, tokenTag, "credentials: %v", err)
			continue
		}
		t.Auth = wssec.NewAuthenticator(wssec.Policy{Credentials: creds, Text: t.text, Digest: t.digest, Window: t.window, Replay: replay, Checks: checks})
	}
	for _, t := range p.InvokeTokens {
		if pw, ok := t.secret.read(dir, lim, tokenTag, errs); ok {
			t.Signer = &wssec.Signer{User: t.secret.user, Password: pw, Digest: t.digest, TTL: 5 * time.Minute}
		}
	}
}

// loadCredentials reads the credentials file name of the bundle in dir
// through bundlefs (a regular file inside the bundle, under its bound)
// and parses it as wssec.LoadCredentials does.
func loadCredentials(dir, name string, lim bundlefs.Limits) (*wssec.Credentials, error) {
	b, fi, err := bundlefs.ReadFileInfo(dir, name, lim)
	if err != nil {
		return nil, err
	}
	return wssec.CredentialsOf(name, fi, b)
}
