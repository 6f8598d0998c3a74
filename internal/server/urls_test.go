package server

import (
	"net"
	"testing"
)

// Endpoint references name the scheme orchd serves.
func TestBaseURLScheme(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}
	for scheme, want := range map[string]string{"http": "http://127.0.0.1:8443", "https": "https://127.0.0.1:8443"} {
		if got := BaseURL(scheme, addr); got != want {
			t.Errorf("BaseURL(%s) = %q, want %q", scheme, got, want)
		}
	}
}
