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
		{name: "trimmed", content: "  tok-1\n", mode: 0o600, want: "tok-1"},
		{name: "others may read it", content: "tok-2", mode: 0o644, want: "tok-2", warn: true},
		{name: "the group may read it", content: "tok-3\n", mode: 0o640, want: "tok-3", warn: true},
		{name: "empty", content: "", mode: 0o600, wantErr: "the file is empty"},
		{name: "blank", content: " \n\t\n", mode: 0o600, wantErr: "the file is empty"},
		{name: "two tokens", content: "a b\n", mode: 0o600, wantErr: "white space"},
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
			got, err := readToken(p, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--admin-token-file") {
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
