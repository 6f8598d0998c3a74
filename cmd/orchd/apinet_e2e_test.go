package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The one rule for the management API on a network (docs/security.md):
// on a listener that is not loopback, whichever flag opened it, the API
// and the console are off without a token, with a warning naming the
// token flag; a token shorter than 16 bytes stops orchd at start.

// apiNetToken is a token of the minimum length's order (26 bytes).
const apiNetToken = adminToken

// nonLoopbackIP is an IPv4 address of this host that is not loopback
// (the container's eth0 one), or "" when there is none.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// apiURL is the base URL of the API orchd o logged (the "management
// API" line), dialled on 127.0.0.1 when it listens on every interface.
func apiURL(t *testing.T, o *orchd) string {
	t.Helper()
	m := adminRE.FindStringSubmatch(o.log())
	if m == nil {
		t.Fatalf("no management API address in the log\n%s", o.log())
	}
	host, port, err := net.SplitHostPort(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// offWarnRE is the start-up warning of an API switched off.
var offWarnRE = regexp.MustCompile(`level=WARN msg="the management API is off[^"]*--admin-token-file[^"]*"`)

// TestAPIOnNetworkNeedsToken: --admin-listen and --listen, on 0.0.0.0
// and on this host's non-loopback address: without a token the API and
// the console answer 403 naming --admin-token-file and the log warns;
// with a token of 16 bytes or more the API answers with it and 401
// without it.
func TestAPIOnNetworkNeedsToken(t *testing.T) {
	deploy := t.TempDir()
	copyBundle(t, deploy, "purchase-order", "127.0.0.1:1", "127.0.0.1:1", nil)
	hosts := []string{"0.0.0.0"}
	if ip := nonLoopbackIP(t); ip != "" {
		hosts = append(hosts, ip)
	} else {
		t.Log("no non-loopback IPv4 address on this host: 0.0.0.0 only")
	}
	for _, flag := range []string{"--admin-listen", "--listen"} {
		for _, host := range hosts {
			t.Run(strings.TrimPrefix(flag, "--")+"="+host, func(t *testing.T) {
				t.Run("no token", func(t *testing.T) {
					o := startOrchd(t, "--deploy", deploy, flag, host+":0")
					base := apiURL(t, o)
					for _, path := range []string{"/api/v1/processes", "/api/v1/instances", "/api/v1/", "/console/"} {
						status, body := getAuth(t, base+path, "", "")
						if status != http.StatusForbidden || !strings.Contains(body, "--admin-token-file") {
							t.Errorf("GET %s without a token on %s %s: %d %.300s", path, flag, host, status, body)
						}
					}
					if !offWarnRE.MatchString(o.log()) || !strings.Contains(o.log(), "flag="+flag) {
						t.Errorf("no WARN line saying the API is off on %s and naming --admin-token-file:\n%s", flag, o.log())
					}
				})
				t.Run("token", func(t *testing.T) {
					o := startOrchd(t, "--deploy", deploy, flag, host+":0", "--admin-token-file", tokenFile(t, apiNetToken))
					base := apiURL(t, o)
					if status, body := getAuth(t, base+"/api/v1/processes", apiNetToken, ""); status != 200 || !strings.Contains(body, "PurchaseOrder") {
						t.Errorf("GET processes with the token: %d %.300s", status, body)
					}
					if status, body := getAuth(t, base+"/api/v1/processes", "", ""); status != http.StatusUnauthorized {
						t.Errorf("GET processes without the token: %d %.300s", status, body)
					}
					if offWarnRE.MatchString(o.log()) {
						t.Errorf("warned that the API is off with a token:\n%s", o.log())
					}
				})
			})
		}
	}
	// Loopback keeps working without a token (read-only), on both flags.
	t.Run("loopback", func(t *testing.T) {
		o := startOrchd(t, "--deploy", deploy, "--admin-listen", "127.0.0.1:0")
		if status, body := getAuth(t, apiURL(t, o)+"/api/v1/processes", "", ""); status != 200 {
			t.Errorf("GET processes on a loopback --admin-listen without a token: %d %.300s", status, body)
		}
		if offWarnRE.MatchString(o.log()) {
			t.Errorf("warned that the API is off on loopback:\n%s", o.log())
		}
	})
}

// TestShortTokenRefused: a token file holding fewer than 16 bytes stops
// orchd serve at start, non-zero, with an error naming the flag and the
// minimum, before it opens anything; on any listener, for the admin and
// the read token.
func TestShortTokenRefused(t *testing.T) {
	// A persistent process: orchd would open its store at start.
	deploy := t.TempDir()
	copyBundleFrom(t, "../../deploy/purchase-order-persistent", deploy, "po-persistent", "127.0.0.1:1", "127.0.0.1:1", nil)
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"admin token, 3 bytes", []string{"--admin-token-file", tokenFile(t, "abc")}, "--admin-token-file"},
		{"admin token, 15 bytes, on --admin-listen", []string{"--admin-listen", "0.0.0.0:0", "--admin-token-file", tokenFile(t, "0123456789abcde")}, "--admin-token-file"},
		{"read token, 3 bytes", []string{"--admin-token-file", tokenFile(t, apiNetToken), "--admin-read-token-file", tokenFile(t, "abc")}, "--admin-read-token-file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			data := t.TempDir()
			args := append([]string{"serve", "--listen", "127.0.0.1:0", "--deploy", deploy, "--data", data}, tc.args...)
			out, err := exec.CommandContext(ctx, orchdBin, args...).CombinedOutput()
			checkRaces(t, "orchd serve", string(out), err)
			var ee *exec.ExitError
			if ctx.Err() != nil {
				t.Fatalf("orchd serve with a short token did not exit (it served):\n%s", out)
			}
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("orchd serve with a short token: %v, want a non-zero exit\n%s", err, out)
			}
			if s := string(out); !strings.Contains(s, tc.flag) || !strings.Contains(s, "at least 16 bytes") {
				t.Errorf("the error does not name %s and the minimum (at least 16 bytes):\n%s", tc.flag, s)
			}
			if ents, err := os.ReadDir(data); err != nil || len(ents) != 0 {
				t.Errorf("orchd opened its data directory before refusing the token: %v %v", ents, err)
			}
		})
	}
}
