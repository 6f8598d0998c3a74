package adminserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/mgmttest"
)

// get answers GET url's status and body.
func get(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestOwnListenerWithToken(t *testing.T) {
	b, _ := mgmttest.Backend(t, nil)
	tf := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tf, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{TokenFile: tf, Listen: "127.0.0.1:0", Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Separate() {
		t.Fatal("not on its own listener with Listen set")
	}
	s.Start("http", nil, slog.New(slog.DiscardHandler))
	base := "http://" + s.ln.Addr().String()
	if code, _ := get(t, http.MethodGet, base+"/api/v1/processes", ""); code != http.StatusUnauthorized {
		t.Fatalf("a read without the token: %d, want 401", code)
	}
	if code, body := get(t, http.MethodGet, base+"/api/v1/processes", "tok"); code != 200 || !strings.Contains(body, `"Echo"`) {
		t.Fatalf("GET processes: %d %s", code, body)
	}
	retire := base + "/api/v1/processes/Echo/versions/1/retire"
	if code, _ := get(t, http.MethodPost, retire, ""); code != http.StatusUnauthorized {
		t.Fatalf("a mutation without the token: %d, want 401", code)
	}
	if code, body := get(t, http.MethodPost, retire, "tok"); code != 200 {
		t.Fatalf("a mutation with the token: %d %s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Shutdown(ctx)
	if _, err := http.Get(base + "/api/v1/processes"); err == nil {
		t.Fatal("the listener still serves after Shutdown")
	}
}

func TestOnMainListenerReadOnly(t *testing.T) {
	b, _ := mgmttest.Backend(t, nil)
	s, err := New(Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Separate() || s.Handler == nil {
		t.Fatal("without Listen the API is the main listener's handler")
	}
	if _, err := New(Options{TokenFile: filepath.Join(t.TempDir(), "none"), Backend: b}); err == nil || !strings.Contains(err.Error(), "--admin-token-file") {
		t.Fatalf("a missing token file: %v, want an error naming the flag", err)
	}
	if _, err := New(Options{Listen: "127.0.0.1:-1", Backend: b}); err == nil || !strings.Contains(err.Error(), "--admin-listen") {
		t.Fatalf("a bad --admin-listen: %v", err)
	}
}
