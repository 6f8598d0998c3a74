package adminserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/buildinfo"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/server"
)

// readToken reads the token of the file path given to flag: the file's
// content, trimmed, one word of at least admin.MinTokenLen bytes. A
// file others can read is worth a warning.
func readToken(flag, path string, log *slog.Logger) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s %s: the file is empty; write the token in it", flag, path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s %s: the token holds white space; write one token on one line", flag, path)
	}
	if len(tok) < admin.MinTokenLen {
		return "", fmt.Errorf("%s %s: the token is %d bytes; it must be at least %d bytes (head -c 24 /dev/urandom | base64 makes one)",
			flag, path, len(tok), admin.MinTokenLen)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the admin token file is readable by others; chmod 600 it", slog.String("file", path), slog.String("mode", fi.Mode().Perm().String()))
	}
	return tok, nil
}

// Tokens are the management API's bearer tokens; empty: none.
type Tokens struct {
	// Admin reads and mutates (--admin-token-file); Read only reads
	// (--admin-read-token-file).
	Admin, Read string
}

// ReadTokens reads the token files of --admin-token-file (tokenFile) and
// --admin-read-token-file (readTokenFile), either empty for none: each a
// word of at least admin.MinTokenLen bytes, the two different. orchd
// serve calls it first, so that a bad token stops it before it opens
// anything.
func ReadTokens(tokenFile, readTokenFile string, log *slog.Logger) (Tokens, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var t Tokens
	for _, f := range []struct {
		flag, file string
		tok        *string
	}{{"--admin-token-file", tokenFile, &t.Admin}, {"--admin-read-token-file", readTokenFile, &t.Read}} {
		if f.file != "" {
			var err error
			if *f.tok, err = readToken(f.flag, f.file, log); err != nil {
				return Tokens{}, err
			}
		}
	}
	if t.Admin != "" && t.Admin == t.Read {
		return Tokens{}, fmt.Errorf("--admin-read-token-file holds the admin token: give the read token its own value")
	}
	return t, nil
}

// Server is the management API and console of orchd serve: the
// handler, mounted on the main listener (Handler, when Separate is
// false), or served on --admin-listen by its own http.Server.
type Server struct {
	// Handler serves the API and the console.
	Handler http.Handler
	access  admin.Access
	srv     *http.Server // nil when on the main listener
	ln      net.Listener
	// done, closed, ends the event streams.
	done     chan struct{}
	once     sync.Once
	readOnly bool
	// flag names the listener the API is on: --listen or --admin-listen.
	flag string
}

// Options configure a Server.
type Options struct {
	// Tokens are the API's tokens (ReadTokens): with one every request
	// needs a token; with none the API is read-only, served only on
	// loopback listeners (on any other it is off: admin.Exposed).
	Tokens Tokens
	// MaxBundle is the largest bundle upload in bytes (--bundle-max,
	// the bound of a bundle's files too); zero takes admin's default.
	MaxBundle int64
	// Hosts are the host names the API answers besides its listener's
	// own address (--admin-hosts; the Host header is checked against DNS
	// rebinding).
	Hosts []string
	// Main is the SOAP listener's address (--listen), where the API is
	// served without Listen.
	Main net.Addr
	// Listen is --admin-listen: the API's own address; empty serves it
	// on the main listener. Listener, when set, is that address already
	// bound.
	Listen   string
	Listener net.Listener
	// Backend is what the API operates on; Stream, nil without events,
	// feeds its event stream; Console, when set, is served at /console/.
	Backend mgmt.Backend
	Stream  admin.Stream
	Console http.Handler
	// TLS, when set, makes --admin-listen serve https.
	TLS *tls.Config
	// IdleTimeout closes idle keep-alive connections of --admin-listen.
	IdleTimeout time.Duration
	// Logger receives the API's logs.
	Logger *slog.Logger
}

// New builds the management API over o.Backend and, with o.Listen,
// listens on its own address.
func New(o Options) (*Server, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tok, readTok := o.Tokens.Admin, o.Tokens.Read
	a := &Server{done: make(chan struct{}), readOnly: tok == ""}
	var ln net.Listener
	if o.Listen != "" {
		ln = o.Listener
		if ln == nil {
			var err error
			if ln, err = net.Listen("tcp", o.Listen); err != nil {
				return nil, fmt.Errorf("listen on --admin-listen %s: %w", o.Listen, err)
			}
		}
	}
	// One rule for whichever listener serves the API (admin.Exposed).
	if o.Main != nil {
		a.access, a.flag = admin.ListenerAccess(o.Main, tok, readTok, o.Hosts), "--listen"
	}
	if ln != nil {
		a.access, a.flag = admin.ListenerAccess(ln.Addr(), tok, readTok, o.Hosts), "--admin-listen"
	}
	a.Handler = admin.New(admin.Options{Backend: o.Backend, Stream: o.Stream, Access: a.access, Console: o.Console,
		MaxBundle: o.MaxBundle, Logger: log, Build: buildinfo.Read(), Done: a.done})
	if ln != nil {
		a.ln = ln
		a.srv = &http.Server{Handler: server.Guard(a.Handler), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: o.IdleTimeout,
			TLSConfig: o.TLS, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn), ConnContext: server.GuardConnContext(nil)}
	}
	return a, nil
}

// Separate reports whether the API has its own listener
// (--admin-listen); if not, the main listener mounts Handler.
func (a *Server) Separate() bool { return a.srv != nil }

// Start serves --admin-listen (if set) and logs where the API is; addr
// is the main listener's. With TLS (scheme https) --admin-listen serves
// TLS too.
func (a *Server) Start(scheme string, addr net.Addr, log *slog.Logger) {
	if a.srv != nil {
		addr = a.ln.Addr()
		go func() {
			if a.srv.TLSConfig != nil {
				_ = a.srv.ServeTLS(a.ln, "", "")
				return
			}
			_ = a.srv.Serve(server.GuardListener(a.ln))
		}()
	}
	log.Info("management API", slog.String("addr", addr.String()), slog.String("url", scheme+"://"+addr.String()+"/api/v1/"),
		slog.Bool("readOnly", a.readOnly), slog.String("access", a.access.Describe()))
	if a.access.Off != "" {
		log.Warn(fmt.Sprintf("the management API is off: its listener is not loopback and no token is set; to serve it here start orchd with --admin-token-file FILE (a token of at least %d bytes)", admin.MinTokenLen),
			slog.String("flag", a.flag), slog.String("addr", addr.String()))
	}
}

// Shutdown ends the event streams and, with --admin-listen, shuts its
// server down gracefully (within ctx).
func (a *Server) Shutdown(ctx context.Context) {
	a.endStreams()
	if a.srv != nil {
		if err := a.srv.Shutdown(ctx); err != nil {
			_ = a.srv.Close()
		}
	}
}

// Close ends the event streams and closes --admin-listen's server and
// listener at once.
func (a *Server) Close() {
	a.endStreams()
	if a.srv != nil {
		_ = a.srv.Close()
	}
	if a.ln != nil {
		_ = a.ln.Close()
	}
}

func (a *Server) endStreams() {
	a.once.Do(func() { close(a.done) })
}
