package adminserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
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

// testToken is a test token of the minimum length's order.
const testToken = "adminserver-test-token-1"

func TestOwnListenerWithToken(t *testing.T) {
	b, _ := mgmttest.Backend(t, nil)
	tf := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tf, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := ReadTokens(tf, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Tokens: tokens, Listen: "127.0.0.1:0", Backend: b})
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
	if code, body := get(t, http.MethodGet, base+"/api/v1/processes", testToken); code != 200 || !strings.Contains(body, `"Echo"`) {
		t.Fatalf("GET processes: %d %s", code, body)
	}
	retire := base + "/api/v1/processes/Echo/versions/1/retire"
	if code, _ := get(t, http.MethodPost, retire, ""); code != http.StatusUnauthorized {
		t.Fatalf("a mutation without the token: %d, want 401", code)
	}
	if code, body := get(t, http.MethodPost, retire, testToken); code != 200 {
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
	if _, err := ReadTokens(filepath.Join(t.TempDir(), "none"), "", nil); err == nil || !strings.Contains(err.Error(), "--admin-token-file") {
		t.Fatalf("a missing token file: %v, want an error naming the flag", err)
	}
	if _, err := New(Options{Listen: "127.0.0.1:-1", Backend: b}); err == nil || !strings.Contains(err.Error(), "--admin-listen") {
		t.Fatalf("a bad --admin-listen: %v", err)
	}
}

// TestOwnListenerOffOnNetwork: --admin-listen on every interface without
// a token serves no API (403 naming --admin-token-file) and warns, naming
// the flag; on loopback it reads.
func TestOwnListenerOffOnNetwork(t *testing.T) {
	b, _ := mgmttest.Backend(t, nil)
	for _, tc := range []struct {
		listen string
		off    bool
	}{{"0.0.0.0:0", true}, {"127.0.0.1:0", false}} {
		s, err := New(Options{Listen: tc.listen, Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		s.Start("http", nil, slog.New(slog.NewTextHandler(&logs, nil)))
		_, port, _ := net.SplitHostPort(s.ln.Addr().String())
		code, body := get(t, http.MethodGet, "http://127.0.0.1:"+port+"/api/v1/processes", "")
		warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "flag=--admin-listen")
		if tc.off && (code != http.StatusForbidden || !strings.Contains(body, "--admin-token-file") || !warned) {
			t.Errorf("%s without a token: %d %s; log:\n%s", tc.listen, code, body, logs.String())
		}
		if !tc.off && (code != 200 || warned) {
			t.Errorf("%s without a token: %d %s; log:\n%s", tc.listen, code, body, logs.String())
		}
		s.Close()
	}
}
