package redact

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAddress(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"http://127.0.0.1:9101/crm", "http://127.0.0.1:9101/crm"},
		{"http://bob:pw@127.0.0.1:9101/crm", "http://***@127.0.0.1:9101/crm"},
		{"https://bob@host/x", "https://***@host/x"},
		{"http://bob:p@ss@host/x", "http://***@host/x"},
		{"http://bob:pw@127.0.0.1:notaport/crm", "http://***@127.0.0.1:notaport/crm"},
		{"http://bob:pw@127.0.0.1:1/crm%zz", "http://***@127.0.0.1:1/crm%zz"},
		{"http://bob:pw@bad host:1/crm", "http://***@bad host:1/crm"},
		{"http://bob:pw@127.0.0.1:1/crm\x7f", "http://***@127.0.0.1:1/crm\x7f"},
		{"bob:pw@127.0.0.1:1/crm", "bob:***@127.0.0.1:1/crm"},
		{"HTTP://bob:pw@host?q=1", "HTTP://***@host?q=1"},
		{"http://host/users/a@b", "http://host/users/a@b"},
		{"http://host?to=a@b", "http://host?to=a@b"},
		{"ops@example.com", "ops@example.com"},
		{"mailto:ops@example.com", "mailto:***@example.com"},
		{"x://y://bob:pw@host/x", "x://y://***@host/x"},
	} {
		if got := Address(tc.in); got != tc.want {
			t.Errorf("Address(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAddressNoQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://host/x?token=abc#f", "http://host/x"},
		{"http://bob:pw@host:bad/x?token=abc", "http://host:bad/x"},
		{"bob:pw@host/x?q", "bob:host/x"},
		{"http://host/x", "http://host/x"},
	} {
		if got := AddressNoQuery(tc.in); got != tc.want {
			t.Errorf("AddressNoQuery(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWithoutUserinfo(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://bob:pw@partner.example/partner?q=1", "http://partner.example/partner?q=1"},
		{"http://bob:pw@h:notaport/x", "http://h:notaport/x"},
		{"http://partner.example/partner", "http://partner.example/partner"},
	} {
		if got := WithoutUserinfo(tc.in); got != tc.want {
			t.Errorf("WithoutUserinfo(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"no address here", "no address here"},
		{`partner http://bob:pw@h:x/crm op: parse "http://bob:pw@h:x/crm": invalid port ":x" after host`,
			`partner http://***@h:x/crm op: parse "http://***@h:x/crm": invalid port ":x" after host`},
		{`Post "bob:pw@h:1/crm": unsupported protocol scheme "bob"`, `Post "bob:***@h:1/crm": unsupported protocol scheme "bob"`},
		{`<soap:address location="http://u:pw@bad host/x"/>`, `<soap:address location="http://***@bad host/x"/>`},
		{"write to ops@example.com", "write to ops@example.com"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestParse: a parse error quotes the redacted address, and unwraps to
// the *url.Error it is.
func TestParse(t *testing.T) {
	for _, s := range []string{
		"http://bob:pw-X1@127.0.0.1:notaport/crm",
		"http://bob:pw-X1@127.0.0.1:1/crm%zz",
		"http://bob:pw-X1@bad host:1/crm",
		"http://bob:pw-X1@127.0.0.1:1/crm\x7f",
		":bob:pw-X1@host",
	} {
		_, err := Parse(s)
		if err == nil {
			t.Errorf("Parse(%q): no error", s)
			continue
		}
		if strings.Contains(err.Error(), "pw-X1") {
			t.Errorf("Parse(%q): %v shows the password", s, err)
		}
		var ue *url.Error
		if !errors.As(err, &ue) {
			t.Errorf("Parse(%q): %T is no *url.Error", s, err)
		}
	}
	u, err := Parse("http://bob:pw@host/x")
	if err != nil || u.User.Username() != "bob" {
		t.Errorf("Parse of a good address: %v, %v (the credentials are kept for use)", u, err)
	}
	if Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

// FuzzAddress: whatever surrounds a user:password@ authority, the
// password shows in neither Address, AddressNoQuery nor Text.
func FuzzAddress(f *testing.F) {
	f.Add("http://", "bob", "s3cret", "127.0.0.1:notaport/crm")
	f.Add("", "bob", "pw", "bad host:1/x%zz")
	f.Add("https://", "u", "p@ss", "h\x7f/x?q=1")
	f.Add("parse \"http://", "a", "b:c", "h:1\": invalid port")
	f.Fuzz(func(t *testing.T, prefix, user, password, rest string) {
		if !utf8.ValidString(password) || len(password) < 4 ||
			strings.ContainsAny(password, "/?#*") || strings.ContainsAny(user, "/?#@") ||
			strings.ContainsAny(prefix, "@/?#") {
			return
		}
		if !strings.HasSuffix(prefix, "://") && prefix != "" {
			return // a URL or text begins the address
		}
		stop := " \t\r\n\"'<>`"
		if strings.ContainsAny(password+user, stop) || strings.Contains(user, password) || strings.Contains(user+password, "://") {
			return
		}
		s := prefix + user + ":" + password + "@" + rest
		for name, out := range map[string]string{
			"Address":         Address(s),
			"AddressNoQuery":  AddressNoQuery(s),
			"WithoutUserinfo": WithoutUserinfo(s),
			"Text":            Text(s),
			"Text (quoted)":   Text(`parse "` + s + `": bad`),
		} {
			if strings.Contains(out, password) && !strings.Contains(strings.Replace(s, user+":"+password+"@", "", 1), password) {
				t.Errorf("%s(%q) = %q shows the password %q", name, s, out, password)
			}
		}
	})
}
