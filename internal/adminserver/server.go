package adminserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/mgmt"
	"github.com/orchd/orchd/internal/server"
)

// readToken reads the admin token: the file's content, trimmed, which
// must not be empty. A file others can read is worth a warning.
func readToken(path string, log *slog.Logger) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--admin-token-file %s: the file is empty; write the token in it", path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("--admin-token-file %s: the token holds white space; write one token on one line", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the admin token file is readable by others; chmod 600 it", slog.String("file", path), slog.String("mode", fi.Mode().Perm().String()))
	}
	return tok, nil
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
}

// Options configure a Server.
type Options struct {
	// TokenFile holds the admin bearer token (--admin-token-file): with
	// it every request needs a token and mutations need this one; empty
	// makes the API read-only, served only on loopback listeners.
	// ReadTokenFile holds a second token that reads but mutates nothing
	// (--admin-read-token-file).
	TokenFile, ReadTokenFile string
	// MaxBundle is the largest bundle upload in bytes (--bundle-max,
	// the bound of a bundle's files too); zero takes admin's default.
	MaxBundle int64
	// Hosts are the host names the API answers besides its listener's
	// own address (--admin-hosts; the Host header is checked against DNS
	// rebinding).
	Hosts []string
	// Main is the SOAP listener's address: without a token the API is
	// off there unless it is loopback.
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
	var tok, readTok string
	for _, f := range []struct {
		file string
		tok  *string
	}{{o.TokenFile, &tok}, {o.ReadTokenFile, &readTok}} {
		if f.file != "" {
			var err error
			if *f.tok, err = readToken(f.file, log); err != nil {
				return nil, err
			}
		}
	}
	if tok != "" && tok == readTok {
		return nil, fmt.Errorf("--admin-read-token-file holds the admin token: give the read token its own value")
	}
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
	if o.Main != nil {
		a.access = admin.ListenerAccess(o.Main, tok, readTok, o.Hosts, false)
	}
	if ln != nil {
		a.access = admin.ListenerAccess(ln.Addr(), tok, readTok, o.Hosts, true)
	}
	a.Handler = admin.New(admin.Options{Backend: o.Backend, Stream: o.Stream, Access: a.access, Console: o.Console,
		MaxBundle: o.MaxBundle, Logger: log, Version: orchdVersion(), Done: a.done})
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
		log.Warn("the management API is off: --listen is not loopback and no --admin-token-file is set; set one, or serve the API on --admin-listen",
			slog.String("addr", addr.String()))
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

// orchdVersion is the module version orchd was built from.
func orchdVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
