package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad TLS, partner and front-door flags stop serve before anything
// listens, saying which flag is wrong.
func TestServeRejectsBadPartnerFlags(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not PEM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(c *serveConfig)
		want string
	}{
		{"cert without key", func(c *serveConfig) { c.tls.cert = junk }, "--tls-cert and --tls-key go together"},
		{"unreadable pair", func(c *serveConfig) { c.tls.cert, c.tls.key = junk, junk }, "--tls-cert/--tls-key"},
		{"partner cert without key", func(c *serveConfig) { c.tls.partnerCert = junk }, "--partner-cert and --partner-key go together"},
		{"partner CA without certificates", func(c *serveConfig) { c.tls.partnerCA = junk }, "--partner-ca " + junk + ": no PEM certificate in it"},
		{"missing partner CA", func(c *serveConfig) { c.tls.partnerCA = filepath.Join(dir, "nope.pem") }, "--partner-ca: open"},
		{"negative partner timeout", func(c *serveConfig) { c.partnerTimeout = -time.Second }, "--partner-timeout (-1s) and --partner-max-response (4194304) may not be negative"},
		{"negative read-header timeout", func(c *serveConfig) { c.front.readHeaderTimeout = -time.Second }, "--read-header-timeout -1s"},
		{"negative body timeout", func(c *serveConfig) { c.front.bodyTimeout = -time.Second }, "--body-timeout -1s: may not be negative"},
		{"negative header bytes", func(c *serveConfig) { c.front.maxHeaderBytes = -1 }, "--max-http-header-bytes -1"},
		{"negative max conns", func(c *serveConfig) { c.front.maxConns = -1 }, "--max-conns -1: may not be negative"},
		{"negative max inflight", func(c *serveConfig) { c.front.maxInflight = -1 }, "--max-inflight -1: may not be negative"},
		{"negative queue wait", func(c *serveConfig) { c.front.queueWait = -time.Second }, "--queue-wait -1s: may not be negative"},
		{"negative max queue", func(c *serveConfig) { c.front.maxQueue = -1 }, "--max-queue -1: may not be negative"},
		{"unknown admission", func(c *serveConfig) { c.front.admission = "lifo" }, `--admission "lifo": want adaptive or fixed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &serveConfig{listen: "127.0.0.1:0", deployDir: t.TempDir(), partnerTimeout: 30 * time.Second, partnerMaxResp: 4 << 20}
			tt.edit(cfg)
			err := runServer(context.Background(), cfg, slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("runServer = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
