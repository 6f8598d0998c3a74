package server

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLimitListener: over the bound a connection is closed at once, with
// the 503 answer when the listener answers, with nothing when it does not
// (TLS); a connection closed gives its slot back.
func TestLimitListener(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer bool
		want   string
	}{
		{"answers 503", true, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"},
		{"closes only", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := NewLimitListener(inner, LimitOptions{Max: 1, HTTPAnswer: tc.answer})
			defer ln.Close()
			accepted := make(chan net.Conn, 4)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						close(accepted)
						return
					}
					accepted <- c
				}
			}()
			dial := func() net.Conn {
				c, err := net.Dial("tcp", inner.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			first := dial()
			served := <-accepted
			if ln.Open() != 1 {
				t.Fatalf("%d open, want 1", ln.Open())
			}
			second := dial()
			_, _ = second.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, err := io.ReadAll(second)
			if err != nil && !strings.Contains(err.Error(), "reset") {
				t.Fatalf("refused connection: %v (read %q)", err, got)
			}
			if !strings.HasPrefix(string(got), tc.want) || (tc.want == "" && len(got) > 0) {
				t.Errorf("refused connection read %q, want %q...", got, tc.want)
			}
			select {
			case c := <-accepted:
				t.Fatalf("the refused connection was accepted: %v", c.RemoteAddr())
			default:
			}
			first.Close()
			served.Close()
			served.Close() // a second Close gives nothing back twice
			if ln.Open() != 0 {
				t.Fatalf("%d open after the close, want 0", ln.Open())
			}
			dial()
			select {
			case <-accepted:
			case <-time.After(10 * time.Second):
				t.Fatal("a new connection was not accepted after the first closed")
			}
		})
	}
}
