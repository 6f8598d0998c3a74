package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// TestCheckActiveBPEL: a call to an ActiveBPEL function orchd offers
// passes; one it refuses names the function and why, one it does not
// know names what it offers, and a call in another namespace, a string
// literal or a node test is not ActiveBPEL's.
func TestCheckActiveBPEL(t *testing.T) {
	ns := map[string]string{"abx": xmldoc.NSActiveBPELFunctions, "ode": xmldoc.NSODEFunctions}
	for _, tc := range []struct {
		src, err     string
		notSupported bool
	}{
		{src: "abx:getProcessId()"},
		{src: "concat(abx:getProcessName(), abx:base64Encode('x', 'UTF-8'))"},
		{src: "'abx:getMyRoleProperty()'"},
		{src: "ode:whatever(1)"},
		{src: "abx:getMyRoleProperty('pl', 'p')", err: "ActiveBPEL function abx:getMyRoleProperty(): orchd has no deployment properties", notSupported: true},
		{src: "1 + abx:copyAttachment('a', 'b')", err: "abx:copyAttachment(): orchd does not support SOAP attachments", notSupported: true},
		{src: "abx:getProcesId()", err: "unknown ActiveBPEL function abx:getProcesId() (orchd offers abx:getProcessId"},
	} {
		err := CheckActiveBPEL(tc.src, ns)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, want an error containing %q", tc.src, err, tc.err)
		case tc.err != "" && errors.Is(err, xmldoc.ErrNotSupported) != tc.notSupported:
			t.Errorf("%s: %v: errors.Is(ErrNotSupported) = %v, want %v", tc.src, err, !tc.notSupported, tc.notSupported)
		}
	}
}

// TestABXBase64: base64Encode encodes s's bytes in the charset, refusing
// a character the charset cannot hold and a charset orchd does not know.
func TestABXBase64(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, err string
	}{
		{args: []string{"héllo"}, want: "aMOpbGxv"},
		{args: []string{"héllo", "utf-8"}, want: "aMOpbGxv"},
		{args: []string{"héllo", "ISO-8859-1"}, want: "aOlsbG8="},
		{args: []string{"", "US-ASCII"}, want: ""},
		{args: []string{"hi", "us-ascii"}, want: "aGk="},
		{args: []string{"héllo", "US-ASCII"}, err: `character 'é' is not in charset US-ASCII`},
		{args: []string{"€", "ISO-8859-1"}, err: `character '€' is not in charset ISO-8859-1`},
		{args: []string{"x", "EBCDIC"}, err: `unsupported charset "EBCDIC"`},
	} {
		got, err := abxBase64(tc.args)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: got %q, %v; want an error containing %q", tc.args, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: got %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}
