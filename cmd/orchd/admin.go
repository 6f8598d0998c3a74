package main

import (
	"context"
	"crypto/tls"
	"flag"
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

// adminConfig are orchd serve's management API flags.
type adminConfig struct {
	tokenFile     string
	readTokenFile string
	hosts         string
	listen        string
	// main is the SOAP listener's address (set by serve): without a
	// token the API is off there unless it is loopback.
	main net.Addr
	// ln is --admin-listen bound early (serve binds it before joining a
	// cluster, whose membership publishes its address); nil: newAdmin
	// binds it.
	ln net.Listener
}

func adminFlags(fs *flag.FlagSet, c *adminConfig) {
	fs.StringVar(&c.tokenFile, "admin-token-file", "", "file holding the admin bearer token: with it every management API request (reads, the event stream, /instances) needs a token and mutations need this one; without any token the API is read-only and served only on a loopback --listen or on --admin-listen")
	fs.StringVar(&c.readTokenFile, "admin-read-token-file", "", "file holding a second bearer token that reads the management API but mutates nothing")
	fs.StringVar(&c.hosts, "admin-hosts", "", "comma-separated host names the management API and console answer besides the listener's own address (the Host header is checked against DNS rebinding)")
	fs.StringVar(&c.listen, "admin-listen", "", "serve the management API (/api/v1/) and the console (/console/) on this address instead of --listen")
}

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

// adminServer is the management API and console of orchd serve: the
// handler, mounted on the main listener, or served on --admin-listen by
// its own http.Server.
type adminServer struct {
	handler http.Handler
	// private guards the main listener's routes that show instance
	// data (server.Options.Private).
	private func(http.Handler) http.Handler
	access  admin.Access
	srv     *http.Server // nil when on the main listener
	ln      net.Listener
	// done, closed, ends the event streams.
	done     chan struct{}
	once     sync.Once
	readOnly bool
}

// newAdmin builds the management API over backend (stream may be nil:
// no live events) and, with --admin-listen, listens on its own address.
// The console, when there is one, is served at /console/.
func newAdmin(c *adminConfig, backend mgmt.Backend, stream admin.Stream, console http.Handler, tlsConf *tls.Config, idle time.Duration, log *slog.Logger) (*adminServer, error) {
	var tok, readTok string
	for _, f := range []struct {
		file string
		tok  *string
	}{{c.tokenFile, &tok}, {c.readTokenFile, &readTok}} {
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
	var hosts []string
	if c.hosts != "" {
		hosts = strings.Split(c.hosts, ",")
	}
	a := &adminServer{done: make(chan struct{}), readOnly: tok == ""}
	var ln net.Listener
	if c.listen != "" {
		ln = c.ln
		if ln == nil {
			var err error
			if ln, err = net.Listen("tcp", c.listen); err != nil {
				return nil, fmt.Errorf("listen on --admin-listen %s: %w", c.listen, err)
			}
		}
	}
	if c.main != nil {
		mainAccess := admin.ListenerAccess(c.main, tok, readTok, hosts, false)
		a.private = func(h http.Handler) http.Handler { return admin.Protect(mainAccess, h) }
		a.access = mainAccess
	}
	if ln != nil {
		a.access = admin.ListenerAccess(ln.Addr(), tok, readTok, hosts, true)
	}
	a.handler = admin.New(admin.Options{Backend: backend, Stream: stream, Access: a.access, Console: console,
		Logger: log, Version: orchdVersion(), Done: a.done})
	if ln != nil {
		a.ln = ln
		a.srv = &http.Server{Handler: server.Guard(a.handler), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idle,
			TLSConfig: tlsConf, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn), ConnContext: server.GuardConnContext(nil)}
	}
	return a, nil
}

// start serves --admin-listen (if set) and logs where the API is; addr
// is the main listener's. With TLS (scheme https) --admin-listen serves
// TLS too.
func (a *adminServer) start(scheme string, addr net.Addr, log *slog.Logger) {
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
		log.Warn("the management API and /instances are off: --listen is not loopback and no --admin-token-file is set; set one, or serve the API on --admin-listen",
			slog.String("addr", addr.String()))
	}
}

// shutdown ends the event streams and, with --admin-listen, shuts its
// server down gracefully (within ctx).
func (a *adminServer) shutdown(ctx context.Context) {
	a.endStreams()
	if a.srv != nil {
		if err := a.srv.Shutdown(ctx); err != nil {
			_ = a.srv.Close()
		}
	}
}

// close ends the event streams and closes --admin-listen's server and
// listener at once.
func (a *adminServer) close() {
	a.endStreams()
	if a.srv != nil {
		_ = a.srv.Close()
	}
	if a.ln != nil {
		_ = a.ln.Close()
	}
}

func (a *adminServer) endStreams() {
	a.once.Do(func() { close(a.done) })
}

// orchdVersion is the module version orchd was built from.
func orchdVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
