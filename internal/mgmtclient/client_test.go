package mgmtclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/mgmtclient"
	"github.com/orchd/orchd/internal/mgmttest"
)

// The client's tests call the real management API (internal/mgmttest:
// internal/admin over the real backend, engine and hot deployer) on
// loopback, with the echo bundle deployed.

const token = "s3cret"

// newAPI serves the management API, its mutations behind token, and
// returns its base URL.
func newAPI(t *testing.T) string {
	t.Helper()
	return mgmttest.Serve(t, token).API
}

func TestGetDecodes(t *testing.T) {
	c, err := mgmtclient.New(newAPI(t), mgmtclient.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	var ps []mgmt.Process
	if err := c.Get(context.Background(), "/processes", nil, &ps); err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Local != "Echo" || ps[0].Version != 1 {
		t.Fatalf("processes %+v, want Echo version 1", ps)
	}
	raw, err := c.Do(context.Background(), http.MethodGet, "/processes/Echo", nil, nil, nil)
	if err != nil || !strings.Contains(string(raw), `"fingerprint"`) {
		t.Fatalf("raw answer %s, %v", raw, err)
	}
}

// TestErrorsMapToSentinels checks each refusal against the sentinel its
// status stands for.
func TestErrorsMapToSentinels(t *testing.T) {
	base := newAPI(t)
	anon, _ := mgmtclient.New(base, mgmtclient.Options{})
	withToken, _ := mgmtclient.New(base, mgmtclient.Options{Token: token})
	wrong, _ := mgmtclient.New(base, mgmtclient.Options{Token: "other"})
	ctx := context.Background()
	for _, tc := range []struct {
		name           string
		c              *mgmtclient.Client
		method, path   string
		body           string
		status         int
		sentinel       error
		messageContain string
	}{
		{"unknown instance", withToken, http.MethodGet, "/instances/m999", "", 404, mgmt.ErrNotFound, "m999"},
		{"read without a token", anon, http.MethodGet, "/instances/m999", "", 401, mgmt.ErrUnauthorized, ""},
		{"mutation without a token", anon, http.MethodPost, "/processes/Echo/versions/1/retire", "", 401, mgmt.ErrUnauthorized, ""},
		{"mutation with a wrong token", wrong, http.MethodPost, "/processes/Echo/versions/1/retire", "", 401, mgmt.ErrUnauthorized, ""},
		{"action that does not apply", withToken, http.MethodPost, "/instances/m999/bogus", "", 404, mgmt.ErrNotFound, ""},
		{"upload that is not a zip", withToken, http.MethodPut, "/bundles/x", "not a zip", 422, mgmt.ErrInvalid, "zip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			var err error
			if body != nil {
				_, err = tc.c.Do(ctx, tc.method, tc.path, nil, body, nil)
			} else {
				_, err = tc.c.Do(ctx, tc.method, tc.path, nil, nil, nil)
			}
			var e *mgmtclient.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if e.Status != tc.status && !(tc.status == 422 && e.Status == 400) {
				t.Errorf("status %d, want %d", e.Status, tc.status)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tc.sentinel)
			}
			if e.Message == "" || !strings.Contains(err.Error(), e.Message) || !strings.Contains(err.Error(), "(") {
				t.Errorf("error text %q lacks the server's message and status", err)
			}
			if tc.messageContain != "" && !strings.Contains(err.Error(), tc.messageContain) {
				t.Errorf("error %q does not say %q", err, tc.messageContain)
			}
		})
	}
	// The token works, and a forwarded Authorization works as it would.
	if _, err := withToken.Do(ctx, http.MethodPost, "/processes/Echo/versions/1/retire", nil, nil, nil); err != nil {
		t.Fatalf("retire with the token: %v", err)
	}
	fwd, _ := mgmtclient.New(base, mgmtclient.Options{ForwardAuthorization: true})
	if _, err := fwd.Do(mgmt.WithAuthorization(ctx, "Bearer "+token), http.MethodPost, "/processes/Echo/versions/1/activate", nil, nil, nil); err != nil {
		t.Fatalf("activate with the caller's Authorization: %v", err)
	}
	if _, err := fwd.Do(ctx, http.MethodPost, "/processes/Echo/versions/1/retire", nil, nil, nil); !errors.Is(err, mgmt.ErrUnauthorized) {
		t.Fatalf("retire with no Authorization to forward: %v, want a refusal", err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, _ := mgmtclient.New(addr, mgmtclient.Options{})
	_, err = c.Do(context.Background(), http.MethodGet, "/processes", nil, nil, nil)
	if !errors.Is(err, mgmt.ErrUnavailable) || !strings.Contains(err.Error(), "orchd at http://"+addr) {
		t.Fatalf("error %v, want ErrUnavailable naming the server", err)
	}
	var e *mgmtclient.Error
	if errors.As(err, &e) {
		t.Fatalf("no answer reported as the server's refusal: %v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Do(ctx, http.MethodGet, "/processes", nil, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v with a cancelled context, want context.Canceled", err)
	}
}
