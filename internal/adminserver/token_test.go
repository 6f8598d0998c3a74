package adminserver

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadToken(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
		wantErr string
		warn    bool
	}{
		{name: "trimmed", content: "  tok-1-0123456789ab\n", mode: 0o600, want: "tok-1-0123456789ab"},
		{name: "others may read it", content: "tok-2-0123456789ab", mode: 0o644, want: "tok-2-0123456789ab", warn: true},
		{name: "the group may read it", content: "tok-3-0123456789ab\n", mode: 0o640, want: "tok-3-0123456789ab", warn: true},
		{name: "16 bytes", content: "0123456789abcdef\n", mode: 0o600, want: "0123456789abcdef"},
		{name: "15 bytes", content: "0123456789abcde\n", mode: 0o600, wantErr: "the token is 15 bytes; it must be at least 16 bytes"},
		{name: "3 bytes", content: "tok", mode: 0o600, wantErr: "at least 16 bytes"},
		{name: "empty", content: "", mode: 0o600, wantErr: "the file is empty"},
		{name: "blank", content: " \n\t\n", mode: 0o600, wantErr: "the file is empty"},
		{name: "two tokens", content: "0123456789abcdef 0123456789abcdef\n", mode: 0o600, wantErr: "white space"},
		{name: "no file", wantErr: "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "token")
			if tc.mode != 0 {
				if err := os.WriteFile(p, []byte(tc.content), tc.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, tc.mode); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			got, err := readToken("--admin-read-token-file", p, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--admin-read-token-file") {
					t.Fatalf("error %v, want one naming the flag and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("token %q, %v; want %q", got, err, tc.want)
			}
			if warned := strings.Contains(logs.String(), "readable by others"); warned != tc.warn {
				t.Errorf("warned %v, want %v: %s", warned, tc.warn, logs.String())
			}
		})
	}
}

// TestReadTokens: each file's error names its flag; the read token must
// differ from the admin one; no file, no token.
func TestReadTokens(t *testing.T) {
	dir := t.TempDir()
	write := func(name, tok string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	admin, read, short := write("admin", "admin-token-0123456789"), write("read", "read-token-0123456789"), write("short", "abc")
	if got, err := ReadTokens(admin, read, nil); err != nil || got != (Tokens{Admin: "admin-token-0123456789", Read: "read-token-0123456789"}) {
		t.Fatalf("ReadTokens: %+v, %v", got, err)
	}
	if got, err := ReadTokens("", "", nil); err != nil || got != (Tokens{}) {
		t.Fatalf("no files: %+v, %v", got, err)
	}
	for _, tc := range []struct{ admin, read, want string }{
		{short, "", "--admin-token-file " + short + ": the token is 3 bytes; it must be at least 16 bytes"},
		{admin, short, "--admin-read-token-file " + short + ": the token is 3 bytes"},
		{admin, admin, "--admin-read-token-file holds the admin token"},
	} {
		if _, err := ReadTokens(tc.admin, tc.read, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadTokens(%s, %s): %v, want %q", tc.admin, tc.read, err, tc.want)
		}
	}
}
