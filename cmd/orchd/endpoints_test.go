package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad --endpoints file stops serve before anything listens, naming the
// file and line.
func TestServeRejectsBadEndpointsFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "endpoints.txt")
	if err := os.WriteFile(f, []byte("# ok\n{urn:x}S P http://127.0.0.1:1/\n{urn:x}S P not-a-url\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &serveConfig{listen: "127.0.0.1:0", deployDir: t.TempDir(), endpointsFile: f}
	err := runServer(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), f+":3:") {
		t.Fatalf("runServer = %v, want an error naming %s:3", err, f)
	}
}
