package server

import "testing"

// TestHeadScanner: the scanner flags a head with both framing headers,
// follows Content-Length bodies to the next head, however the bytes are
// split into reads, and stops after a chunked request.
func TestHeadScanner(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"plain", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc", false},
		{"both", "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true},
		{"both, mixed case, TE first", "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\nCONTENT-LENGTH: 5\r\n\r\n0\r\n\r\n", true},
		{"second head after a body", "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nPOSTPOST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"body that looks like a head", "POST / HTTP/1.1\r\nContent-Length: 60\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: x\r\n\r\n", false},
		{"chunked alone", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false},
		{"bare LF", "GET / HTTP/1.1\nContent-Length: 1\nTransfer-Encoding: chunked\n\n", true},
	} {
		for _, step := range []int{1, 3, 7, len(tc.in)} {
			var s headScanner
			got := false
			for i := 0; i < len(tc.in); i += step {
				if s.scan([]byte(tc.in[i:min(i+step, len(tc.in))])) {
					got = true
				}
			}
			if got != tc.want {
				t.Errorf("%s (reads of %d): flagged %v, want %v", tc.name, step, got, tc.want)
			}
		}
	}
}

// FuzzHeadScanner: any bytes are scanned without a panic.
func FuzzHeadScanner(f *testing.F) {
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s headScanner
		s.scan(b)
	})
}
