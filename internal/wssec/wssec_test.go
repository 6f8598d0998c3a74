package wssec

import (
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"golang.org/x/crypto/bcrypt"
)

const soap11 = "http://schemas.xmlsoap.org/soap/envelope/"

// t0 is the tests' clock.
var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// testCredentials: ann has a bcrypt hash of "ann-pw", bob a plain
// secret "bob-pw".
func testCredentials(t testing.TB) *Credentials {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("ann-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCredentials([]byte("# users\n\nann:" + string(h) + "\nbob:{PLAIN}bob-pw\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// header is what a Signer for user/pw makes at time at.
func header(t testing.TB, user, pw string, digest bool, at time.Time) *etree.Element {
	t.Helper()
	s := &Signer{User: user, Password: pw, Digest: digest, Now: func() time.Time { return at }}
	h, err := s.SecurityHeader(soap11)
	if err != nil {
		t.Fatal(err)
	}
	// As the front door hands it over: parsed from the wire.
	doc := etree.NewDocument()
	doc.SetRoot(h)
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	back := etree.NewDocument()
	if err := back.ReadFromBytes(b); err != nil {
		t.Fatal(err)
	}
	return back.Root()
}

func TestAuthenticate(t *testing.T) {
	creds := testCredentials(t)
	edit := func(h *etree.Element, path, text string) *etree.Element {
		h.FindElement(path).SetText(text)
		return h
	}
	tests := []struct {
		name   string
		policy Policy
		hdrs   func() []*etree.Element
		secure bool
		reason string // "" accepts
	}{
		{name: "digest of a plain secret", hdrs: func() []*etree.Element { return []*etree.Element{header(t, "bob", "bob-pw", true, t0)} }},
		{name: "text against bcrypt over TLS", secure: true, hdrs: func() []*etree.Element { return []*etree.Element{header(t, "ann", "ann-pw", false, t0)} }},
		{name: "text against a plain secret over TLS", secure: true, hdrs: func() []*etree.Element { return []*etree.Element{header(t, "bob", "bob-pw", false, t0)} }},
		{name: "no header", hdrs: func() []*etree.Element { return nil }, reason: "no wsse:Security header"},
		{name: "wrong digest", hdrs: func() []*etree.Element { return []*etree.Element{header(t, "bob", "nope", true, t0)} }, reason: "wrong password"},
		{name: "wrong text", secure: true, hdrs: func() []*etree.Element { return []*etree.Element{header(t, "ann", "nope", false, t0)} }, reason: "wrong password"},
		{name: "unknown user", secure: true, hdrs: func() []*etree.Element { return []*etree.Element{header(t, "eve", "x", false, t0)} }, reason: "unknown user"},
		{name: "text over plain HTTP", hdrs: func() []*etree.Element { return []*etree.Element{header(t, "ann", "ann-pw", false, t0)} }, reason: "needs TLS"},
		{name: "digest of a bcrypt user", hdrs: func() []*etree.Element { return []*etree.Element{header(t, "ann", "ann-pw", true, t0)} }, reason: "needs a {PLAIN} secret"},
		{name: "stale token", hdrs: func() []*etree.Element {
			return []*etree.Element{header(t, "bob", "bob-pw", true, t0.Add(-6*time.Minute))}
		}, reason: "stale"},
		{name: "token from the future", hdrs: func() []*etree.Element {
			return []*etree.Element{header(t, "bob", "bob-pw", true, t0.Add(6*time.Minute))}
		}, reason: "in the future"},
		{name: "expired timestamp", hdrs: func() []*etree.Element {
			return []*etree.Element{edit(header(t, "bob", "bob-pw", true, t0), "./Timestamp/Expires", "2026-12-01T11:59:59Z")}
		}, reason: "expired"},
		{name: "digest without a nonce", hdrs: func() []*etree.Element {
			h := header(t, "bob", "bob-pw", true, t0)
			tok := h.FindElement("./UsernameToken")
			tok.RemoveChild(tok.FindElement("./Nonce"))
			return []*etree.Element{h}
		}, reason: "needs a Nonce and a Created"},
		{name: "digest refused by policy", policy: Policy{Text: true}, hdrs: func() []*etree.Element { return []*etree.Element{header(t, "bob", "bob-pw", true, t0)} }, reason: "PasswordDigest is not accepted"},
		{name: "text refused by policy", policy: Policy{Digest: true}, secure: true, hdrs: func() []*etree.Element { return []*etree.Element{header(t, "bob", "bob-pw", false, t0)} }, reason: "PasswordText is not accepted"},
		{name: "two Security headers", hdrs: func() []*etree.Element {
			return []*etree.Element{header(t, "bob", "bob-pw", true, t0), header(t, "bob", "bob-pw", true, t0)}
		}, reason: "more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.policy
			if !p.Text && !p.Digest {
				p.Text, p.Digest = true, true
			}
			p.Credentials, p.Now = creds, func() time.Time { return t0 }
			a := NewAuthenticator(p)
			hdrs := tt.hdrs()
			got, _, err := a.Authenticate(hdrs, tt.secure)
			if tt.reason == "" {
				if err != nil || len(got) != 1 || got[0] != hdrs[0] {
					t.Fatalf("Authenticate = %v, %v; want the header understood", got, err)
				}
				return
			}
			if !errors.Is(err, ErrFailedAuthentication) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("Authenticate error %v, want a FailedAuthentication saying %q", err, tt.reason)
			}
			for _, pw := range []string{"bob-pw", "ann-pw"} {
				if strings.Contains(err.Error(), pw) {
					t.Errorf("the error %q holds a password", err)
				}
			}
		})
	}
}

// A token accepted once is refused the second time, and a new one
// (another nonce) is accepted.
func TestReplayRefused(t *testing.T) {
	a := NewAuthenticator(Policy{Credentials: testCredentials(t), Text: true, Digest: true, Now: func() time.Time { return t0 }})
	h := header(t, "bob", "bob-pw", true, t0)
	if _, _, err := a.Authenticate([]*etree.Element{h}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Authenticate([]*etree.Element{h}, false); err == nil || !strings.Contains(err.Error(), "replayed") {
		t.Fatalf("replay: %v, want refused as replayed", err)
	}
	if _, _, err := a.Authenticate([]*etree.Element{header(t, "bob", "bob-pw", true, t0)}, false); err != nil {
		t.Fatalf("a new token: %v", err)
	}
}

// The digest is the profile's formula: Base64(SHA-1(nonce + created +
// password)), the nonce decoded (section 3.1).
func TestDigestFormula(t *testing.T) {
	nonce, _ := base64.StdEncoding.DecodeString("LKqI6G/AikKCQrN0zqZFlg==")
	sum := sha1.Sum(append(append(append([]byte{}, nonce...), "2010-09-16T07:50:45Z"...), "userpassword"...))
	if got, want := Digest(nonce, "2010-09-16T07:50:45Z", []byte("userpassword")), base64.StdEncoding.EncodeToString(sum[:]); got != want {
		t.Errorf("Digest = %q, want %q", got, want)
	}
}

func TestParseCredentials(t *testing.T) {
	tests := []struct{ in, err string }{
		{in: "bob:{PLAIN}x\n"},
		{in: "ann:$2y$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n"},
		{in: "", err: "no user"},
		{in: "# only\n", err: "no user"},
		{in: "bob\n", err: "line 1: want user:"},
		{in: "bob:\n", err: "line 1: user \"bob\" has no password"},
		{in: "bob:hunter2\n", err: "neither a bcrypt hash"},
		{in: "bob:{PLAIN}x\nbob:{PLAIN}y\n", err: "line 2: user \"bob\" appears twice"},
		{in: " bob:{PLAIN}x\n", err: "line 1: want user:"},
	}
	for _, tt := range tests {
		_, err := ParseCredentials([]byte(tt.in))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want one saying %q", tt.in, err, tt.err)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("%q: the error %q shows the password", tt.in, err)
		}
	}
}

func TestLoadCredentialsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users")
	if err := os.WriteFile(path, []byte("bob:{PLAIN}x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCredentials(path); !errors.Is(err, ErrFileMode) {
		t.Fatalf("mode 0644: %v, want ErrFileMode", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCredentials(path)
	if err != nil || c.Users() != 1 {
		t.Fatalf("mode 0600: %v, %v", c, err)
	}
}

func FuzzParseCredentials(f *testing.F) {
	f.Add([]byte("bob:{PLAIN}x\nann:$2y$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n"))
	f.Add([]byte("# c\n\n:x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCredentials(b)
		if err == nil && c.Users() == 0 {
			t.Fatal("no error and no user")
		}
	})
}

// FuzzAuthenticate feeds header blocks parsed from arbitrary XML: no
// panic, and nothing but a well-formed token of a known user passes.
func FuzzAuthenticate(f *testing.F) {
	creds := testCredentials(f)
	h := header(f, "bob", "bob-pw", true, t0)
	doc := etree.NewDocument()
	doc.SetRoot(h)
	seed, _ := doc.WriteToBytes()
	f.Add(seed)
	f.Add([]byte(`<wsse:Security xmlns:wsse="` + NSSecExt + `"><wsse:UsernameToken><wsse:Username>bob</wsse:Username><wsse:Password>x</wsse:Password></wsse:UsernameToken></wsse:Security>`))
	a := NewAuthenticator(Policy{Credentials: creds, Text: true, Digest: true, Now: func() time.Time { return t0 }})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := etree.NewDocument()
		if d.ReadFromBytes(b) != nil || d.Root() == nil {
			return
		}
		_, user, err := a.Authenticate([]*etree.Element{d.Root()}, true)
		if err == nil && user != "bob" && user != "ann" {
			t.Fatalf("user %q accepted", user)
		}
	})
}
