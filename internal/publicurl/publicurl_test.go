package publicurl

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestHost(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"localhost", "localhost", true},
		{"LocalHost:8081", "localhost:8081", true},
		{"127.0.0.1:65535", "127.0.0.1:65535", true},
		{"orchd.example.com.", "orchd.example.com.", true},
		{"my_host:443", "my_host:443", true},
		{"[::1]:8443", "[::1]:8443", true},
		{"[2001:db8::1]", "[2001:db8::1]", true},
		{"", "", false},
		{"user:pw@host", "", false},
		{"host:0", "", false},
		{"host:65536", "", false},
		{"host:08080", "", false},
		{"host:", "", false},
		{"host/path", "", false},
		{"ho st", "", false},
		{`host"x`, "", false},
		{"a..b", "", false},
		{"[::1", "", false},
		{"[::1]x", "", false},
		{"[::1]:", "", false},
		{"[fe80::1%eth0]", "", false},
		{"[1.2.3.4]", "", false},
		{"::1", "", false},
	} {
		got, ok := Host(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Host(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParsePublic(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{"", "", nil},
		{"https://api.example.com", "https://api.example.com", nil},
		{"HTTPS://API.example.com:8443/orchd/", "https://api.example.com:8443/orchd", nil},
		{"https://u:p@api.example.com", "", ErrCredentials},
		{"ftp://api.example.com", "", ErrNotAbsolute},
		{"/processes", "", ErrNotAbsolute},
		{"api.example.com:80", "", ErrNotAbsolute},
		{"https://api.example.com/?x=1", "", ErrQuery},
		{"https://api.example.com/#f", "", ErrQuery},
	} {
		got, err := ParsePublic(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("ParsePublic(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestBase(t *testing.T) {
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}
	for _, tc := range []struct {
		name    string
		public  string
		trust   bool
		host    string
		tls     bool
		headers map[string]string
		want    string
	}{
		{name: "host header", host: "127.0.0.1:8081", want: "http://127.0.0.1:8081"},
		{name: "tls", host: "localhost:8443", tls: true, want: "https://localhost:8443"},
		{name: "bad host falls back to the local address", host: "evil host", want: "http://127.0.0.1:8443"},
		{name: "no host", host: "", tls: true, want: "https://127.0.0.1:8443"},
		{name: "forwarded ignored by default", host: "127.0.0.1:8081",
			headers: map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.com"}, want: "http://127.0.0.1:8081"},
		{name: "forwarded trusted", trust: true, host: "127.0.0.1:8081",
			headers: map[string]string{"X-Forwarded-Proto": "HTTPS, http", "X-Forwarded-Host": "api.example.com, inner"}, want: "https://api.example.com"},
		{name: "forwarded invalid values ignored", trust: true, host: "127.0.0.1:8081",
			headers: map[string]string{"X-Forwarded-Proto": "gopher", "X-Forwarded-Host": "a@b"}, want: "http://127.0.0.1:8081"},
		{name: "public wins", public: "https://api.example.com/orchd/", trust: true, host: "127.0.0.1:8081",
			headers: map[string]string{"X-Forwarded-Host": "other"}, want: "https://api.example.com/orchd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := New(tc.public, tc.trust)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, "/processes/P?wsdl", nil)
			r.Host = tc.host
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			} else {
				r.TLS = nil
			}
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
			if got := rs.Base(r); got != tc.want {
				t.Errorf("Base = %q, want %q", got, tc.want)
			}
		})
	}
	var zero *Resolver
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = "example.org"
	if got := zero.Base(r); got != "http://example.org" {
		t.Errorf("nil Resolver: Base = %q", got)
	}
}

// FuzzHost: a Host value that Host accepts makes a URL whose host is
// exactly that value, with no credentials and no path of its own.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"localhost:8080", "[::1]:1", "a.b", "u@h", "h/p", "[::1]x", "h:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got, ok := Host(h)
		if !ok {
			return
		}
		u, err := url.Parse("http://" + got + "/p")
		if err != nil {
			t.Fatalf("Host(%q) accepted %q, which does not parse: %v", h, got, err)
		}
		if u.Host != got || u.User != nil || u.Path != "/p" || u.RawQuery != "" {
			t.Fatalf("Host(%q) = %q: URL host %q user %v path %q", h, got, u.Host, u.User, u.Path)
		}
	})
}
