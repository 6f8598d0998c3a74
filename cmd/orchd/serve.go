package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/orchd/orchd/internal/admin"
	"github.com/orchd/orchd/internal/adminserver"
	"github.com/orchd/orchd/internal/b4p"
	"github.com/orchd/orchd/internal/bundlefs"
	"github.com/orchd/orchd/internal/cluster"
	"github.com/orchd/orchd/internal/clusternode"
	"github.com/orchd/orchd/internal/clusterview"
	"github.com/orchd/orchd/internal/console"
	"github.com/orchd/orchd/internal/endpoints"
	"github.com/orchd/orchd/internal/etcdstore"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/health"
	"github.com/orchd/orchd/internal/hotdeploy"
	"github.com/orchd/orchd/internal/htclient"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/inbox"
	"github.com/orchd/orchd/internal/instancestore"
	"github.com/orchd/orchd/internal/mgmtbackend"
	"github.com/orchd/orchd/internal/mockpartner"
	"github.com/orchd/orchd/internal/process"
	"github.com/orchd/orchd/internal/process/compile"
	"github.com/orchd/orchd/internal/process/interp"
	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/publicurl"
	"github.com/orchd/orchd/internal/server"
	"github.com/orchd/orchd/internal/soap"
	"github.com/orchd/orchd/internal/tracing"
	"github.com/orchd/orchd/internal/wssec"
	"github.com/orchd/orchd/internal/xmlparse"
)

type serveConfig struct {
	listen          string
	publicURL       string
	trustForwarded  bool
	deployDir       string
	deployPoll      time.Duration
	retention       time.Duration
	retentionEvery  time.Duration
	bundle          bundlefs.Limits
	compat          compile.Compat
	dataDir         string
	store           instancestore.Config
	cluster         clusterConfig
	mockPartners    bool
	logLevel        string
	maxBody         int64
	limits          soap.Limits
	idleTimeout     time.Duration
	front           frontDoorConfig
	shutdownTimeout time.Duration
	drainDelay      time.Duration
	messageHold     time.Duration
	messageHoldMax  int
	maxSteps        int
	memory          membudget.Bounds
	debugAddr       string
	partnerConns    int
	endpointsFile   string
	partnerTimeout  time.Duration
	partnerMaxResp  int64
	partnerAllow    string
	tls             tlsConfig
	events          eventsConfig
	sampleEvery     int
	otelEndpoint    string
	admin           adminConfig
	tasks           *humantask.Config
	// extensions are the extension bundles bundles are compiled and run
	// with (linkedExtensions; no flag: they are Go code).
	extensions compile.Extensions
	// started, when set, is called once the server serves, with the
	// address it listens on and its management backend (no flag: tests
	// drive a running server through it).
	started func(addr net.Addr, b *backend)
}

// backend is the management backend serve wires (started hands it on).
type backend = mgmtbackend.Backend

// serveFlags is a FlagSet of serve's flags and the config they fill
// (the tests build a server from flags with it).
func serveFlags(stderr io.Writer) (*flag.FlagSet, *serveConfig) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, defineServe(fs)
}

// defineServe defines serve's flags on fs.
func defineServe(fs *flag.FlagSet) *serveConfig {
	c := &serveConfig{extensions: linkedExtensions()}
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "address to serve SOAP, / and /metrics on")
	fs.StringVar(&c.publicURL, "public-url", "", "base URL clients reach orchd at (https://host[:port][/prefix], behind a proxy): ?wsdl names each endpoint there; empty: the scheme, Host and port each ?wsdl request reached")
	fs.BoolVar(&c.trustForwarded, "trust-forwarded-headers", false, "take ?wsdl's scheme and host from X-Forwarded-Proto and X-Forwarded-Host: only behind a proxy that sets them (a client can send them too)")
	fs.StringVar(&c.deployDir, "deploy", "./deploy", "deploy directory: one bundle folder (with deploy.xml) per subfolder")
	fs.DurationVar(&c.deployPoll, "deploy-poll", 3*time.Second, "scan --deploy this often for new, changed and removed bundles (0: read bundles at start only)")
	fs.DurationVar(&c.retention, "retention", 0, "keep ended instances this long where deploy.xml's orchd:retention says nothing: persistent ones in the store (0: until deleted), in-memory ones' summaries (0: none)")
	fs.DurationVar(&c.retentionEvery, "retention-every", process.DefaultRetentionEvery, "how often the retention sweep deletes the ended instances that are due")
	fs.Int64Var(&c.bundle.MaxFile, "bundle-file-max", bundlefs.DefaultMaxFile, "largest file of a bundle, in bytes (deploy directory and upload; over it the bundle is refused)")
	fs.Int64Var(&c.bundle.MaxBundle, "bundle-max", bundlefs.DefaultMaxBundle, "most bytes of a bundle: all its files in the deploy directory, a zip upload's body and what it extracts to (over it the bundle is refused)")
	fs.Var(&c.compat, "compat", compile.CompatUsage)
	fs.StringVar(&c.dataDir, "data", "./data", "data directory: the instance store of persistent processes ("+instancestore.File+"), opened when the first one is deployed")
	storeFlags(fs, &c.store)
	clusterFlags(fs, &c.cluster)
	fs.BoolVar(&c.mockPartners, "mock-partners", false, "also serve the example's CRM and ERP mock services, on the addresses their WSDLs name")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.Int64Var(&c.maxBody, "max-body", soap.DefaultMaxBodyBytes, "largest request body accepted, in bytes")
	limitFlags(fs, &c.limits)
	fs.DurationVar(&c.idleTimeout, "idle-timeout", 30*time.Second, "close keep-alive connections idle this long")
	frontDoorFlags(fs, &c.front)
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, wait this long for in-flight exchanges")
	fs.DurationVar(&c.drainDelay, "drain-delay", 0, "on SIGINT/SIGTERM, answer /readyz with 503 and go on serving this long before the listener closes, for load balancers to notice (a second signal ends the wait)")
	fs.IntVar(&c.maxSteps, "max-steps", process.DefaultMaxSteps, "activity steps one run of an instance may take without waiting before it is stopped (in-memory: fails, persistent: suspended); deploy.xml's orchd:maxSteps overrides it; negative: no budget")
	memoryFlags(fs, &c.memory)
	fs.DurationVar(&c.messageHold, "message-hold", 5*time.Second, "hold a correlated message no instance waits for yet this long for one that comes to wait (negative: answer at once)")
	fs.IntVar(&c.messageHoldMax, "message-hold-max", process.DefaultMessageHoldMax, "most messages held at once (--message-hold); one more is refused at once with a Server fault (HTTP 503), not held (negative: no bound)")
	fs.IntVar(&c.partnerConns, "partner-conns", soap.DefaultMaxConnsPerHost, "most keep-alive connections to one partner host (negative: no bound)")
	fs.DurationVar(&c.partnerTimeout, "partner-timeout", soap.DefaultCallTimeout, "bound on a partner call that deploy.xml gives no orchd:timeout")
	fs.Int64Var(&c.partnerMaxResp, "partner-max-response", soap.DefaultMaxResponseBytes, "largest partner response accepted, in bytes")
	fs.StringVar(&c.partnerAllow, "partner-allow", "", "comma-separated rules allowing partner addresses chosen at run time (copied endpoint references, REST URIs): HOST[:PORT[-PORT]] with a host name (*.domain), IP or CIDR ([IPv6]:PORT); without a rule loopback, link-local and metadata addresses are refused; a bundle's deploy.xml orchd:partnerAllow narrows this for its process")
	tlsFlags(fs, &c.tls)
	fs.StringVar(&c.endpointsFile, "endpoints", "", "file of partner address overrides: '{ns}Service Port URL' or 'portType {ns}PT URL' a line")
	fs.StringVar(&c.debugAddr, "debug-addr", "", "serve net/http/pprof on this address (off when empty); keep it on loopback")
	fs.IntVar(&c.sampleEvery, "sample-every", process.DefaultSampleEvery, "after the first 16 instances of each version, time one in this many per activity, in every run it has, for the activity outline and diagram of the management API and console (1: every instance; 0: none)")
	fs.StringVar(&c.otelEndpoint, "otel-endpoint", "", "send OpenTelemetry traces to this OTLP collector (http://host:4318; gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc); empty: OTEL_EXPORTER_OTLP_ENDPOINT's, if set, else no tracing")
	eventFlags(fs, &c.events)
	adminFlags(fs, &c.admin)
	c.tasks = humantask.RegisterFlags(fs)
	return c
}

// limitFlags defines the flags of the parsing limits of inbound messages
// (requests and partner replies); a message over one is refused with a
// SOAP Client fault that names the limit.
func limitFlags(fs *flag.FlagSet, l *soap.Limits) {
	fs.IntVar(&l.MaxAttrs, "max-attrs", xmlparse.DefaultMaxAttrs, "most attributes on one element of a message (negative: no limit)")
	fs.IntVar(&l.MaxNSDecls, "max-ns-decls", xmlparse.DefaultMaxNSDecls, "most namespace declarations on one element of a message (negative: no limit)")
	fs.IntVar(&l.MaxElements, "max-elements", xmlparse.DefaultMaxElements, "most elements in a message (negative: no limit)")
	fs.IntVar(&l.MaxDepth, "max-depth", xmlparse.DefaultMaxDepth, "deepest element nesting in a message (negative: no limit)")
	fs.IntVar(&l.MaxValueBytes, "max-value-bytes", xmlparse.DefaultMaxValueBytes, "longest text, CDATA section, comment or attribute value in a message, in bytes (negative: no limit)")
	fs.IntVar(&l.MaxNameBytes, "max-name-bytes", xmlparse.DefaultMaxNameBytes, "longest element or attribute name in a message, in bytes (negative: no limit)")
	fs.IntVar(&l.MaxHeaderBytes, "max-header-bytes", xmlparse.DefaultMaxHeaderBytes, "largest SOAP Header of a message, in bytes (negative: no limit)")
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// serveCommand defines serve's flags; its run serves until ctx ends.
func serveCommand(fs *flag.FlagSet) runFunc {
	cfg := defineServe(fs)
	return func(ctx context.Context, _ *flag.FlagSet, _, stderr io.Writer) int {
		log, err := newLogger(stderr, cfg.logLevel)
		if err != nil {
			fmt.Fprintln(stderr, "orchd:", err)
			return 2
		}
		if err := runServer(ctx, cfg, log); err != nil {
			log.Error("orchd stopped", slog.Any("err", err))
			return 1
		}
		return 0
	}
}

// runServer wires the engine, the SOAP front door and the HTTP server, and
// serves until ctx is done.
func runServer(ctx context.Context, cfg *serveConfig, log *slog.Logger) error {
	// An exchange allocates short-lived trees; collecting less often trades
	// a little memory for CPU. GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	// A bad admin token stops orchd before it opens anything.
	tokens, err := adminserver.ReadTokens(cfg.admin.tokenFile, cfg.admin.readTokenFile, log)
	if err != nil {
		return err
	}
	tr, err := tracing.Start(ctx, tracing.Options{Endpoint: cfg.otelEndpoint, Logger: log})
	if err != nil {
		return err
	}
	defer tr.Close(log) // last: the spans of the shutdown too
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	var overrides *endpoints.Table
	if cfg.endpointsFile != "" {
		t, err := endpoints.Load(cfg.endpointsFile)
		if err != nil {
			return err
		}
		overrides = t
		log.Info("endpoint overrides", slog.String("file", cfg.endpointsFile), slog.Int("rules", len(t.Rules())))
	}
	// BPEL4People's people activity: bound to the engines below.
	people := b4p.New(b4p.Options{Logger: log})
	load := compile.LoadOptions{Extensions: people.With(cfg.extensions), Bundle: cfg.bundle, Compat: cfg.compat}
	if checks := cfg.front.wssecMaxChecks; checks >= 0 {
		if checks == 0 {
			checks = runtime.GOMAXPROCS(0)
		}
		load.AuthChecks = wssec.NewGate(checks)
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "orchd_wssec_checks_refused_total",
			Help: "UsernameToken password checks refused at once because --wssec-max-checks were running.",
		}, func() float64 { return float64(load.AuthChecks.Refused()) }))
	}
	var replay *clusternode.Replay
	if cfg.cluster.name != "" {
		// A UsernameToken's nonce, once taken, is refused on every node.
		replay = &clusternode.Replay{}
		load.Replay = replay
	}
	plans, bad, err := compile.LoadDirWith(cfg.deployDir, load)
	if err != nil {
		return err
	}
	procs := interp.NewVersions(plans)
	for _, b := range bad {
		log.Error("bundle skipped", slog.String("bundle", b.Dir), slog.String("problems", b.Err.Error()))
	}
	// The store is opened when a persistent process needs it: now, or
	// when the first is deployed (hot deploy, upload). Archived versions
	// may hold stored instances too; a cluster node needs the store's
	// etcd client even if all it runs is in-memory.
	cfg.store.Dir = cfg.dataDir
	store := instancestore.NewLazy(cfg.store, log, func(st instancestore.Store) { reg.MustRegister(server.NewStoreCollector(st)) })
	defer store.Close()
	if slices.ContainsFunc(procs, func(p *interp.Version) bool { return !p.InMemory }) ||
		(len(procs) > 0 && (hotdeploy.HasArchive(cfg.dataDir) || cfg.cluster.name != "")) {
		if _, err := store.Open(); err != nil {
			return err
		}
	}

	if err := cfg.front.check(); err != nil {
		return err
	}
	public, err := publicurl.New(cfg.publicURL, cfg.trustForwarded)
	if err != nil {
		return fmt.Errorf("--public-url: %w", err)
	}
	// Zero means the client's defaults.
	if cfg.partnerTimeout < 0 || cfg.partnerMaxResp < 0 {
		return fmt.Errorf("--partner-timeout (%s) and --partner-max-response (%d) may not be negative", cfg.partnerTimeout, cfg.partnerMaxResp)
	}
	serverTLS, partnerTLS, err := cfg.tls.load()
	if err != nil {
		return err
	}
	// Listen first: the endpoint references of provided services name the
	// address actually bound (--listen may say port 0).
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	defer ln.Close()
	scheme := "http"
	if serverTLS != nil {
		scheme = "https"
	}
	policy, err := soap.ParsePartnerPolicy(strings.Split(cfg.partnerAllow, ","))
	if err != nil {
		return err
	}
	client := soap.NewClient(soap.ClientOptions{MaxConnsPerHost: cfg.partnerConns, Timeout: cfg.partnerTimeout,
		MaxResponseBytes: cfg.partnerMaxResp, TLS: partnerTLS, Limits: cfg.limits, Policy: policy, Logger: log})
	// --endpoints overrides deploy-time bindings only: an address a
	// process assigns at run time (a copied endpoint reference) is called
	// as it is, under --partner-allow, unless it names one of this
	// server's own process endpoints (Self): that call stays in process.
	// The engine's own address in myRole endpoint references is the one
	// clients reach (--public-url); the cluster publishes the listener's.
	listenURL := server.BaseURL(scheme, ln.Addr())
	opts := process.Options{Logger: log, Registerer: reg, Partners: overrides.Partners(client.Partner),
		AssignedPartners: client.AssignedPartnerUnder, BaseURL: cmp.Or(public.Configured(), listenURL), Self: selfURLs(scheme, ln.Addr(), cfg.publicURL), MessageHold: cfg.messageHold, MessageHoldMax: cfg.messageHoldMax, MaxSteps: cfg.maxSteps, Memory: cfg.memory, Retention: cfg.retention, RetentionEvery: cfg.retentionEvery}
	// REST extension activities call on the partners' terms: the same
	// keep-alive pool (--partner-conns) and per-call bound.
	opts.HTTPClient, opts.HTTPTimeout = client.PolicedHTTPClient()
	opts.AssignedHTTP = client.AssignedHTTPClient
	opts.Store = store
	if cfg.cluster.name != "" && store.Opened() == nil {
		return fmt.Errorf("--cluster needs --store etcd and a persistent process deployed")
	}
	// Two orchds on one etcd prefix share it only as nodes of a cluster:
	// with --store etcd the store opens at start, so the prefix is
	// claimed before anything runs.
	if cfg.store.Kind == instancestore.Etcd {
		if _, err := store.Open(); err != nil {
			return err
		}
	}
	if es, ok := store.Opened().(*etcdstore.Store); ok {
		host, _ := os.Hostname()
		if err := es.Claim(ctx, cfg.cluster.name, fmt.Sprintf("%s-%d", host, os.Getpid())); err != nil {
			return err
		}
	}
	// The management API's URL, published in the cluster membership:
	// --admin-listen is bound now for that.
	adminURL := listenURL
	if cfg.admin.listen != "" {
		if cfg.admin.ln, err = net.Listen("tcp", cfg.admin.listen); err != nil {
			return fmt.Errorf("listen on --admin-listen %s: %w", cfg.admin.listen, err)
		}
		adminURL = server.BaseURL(scheme, cfg.admin.ln.Addr())
	}
	node, err := joinCluster(ctx, &cfg.cluster, store.Opened(), listenURL, adminURL, ln.Addr().String(), log)
	if err != nil {
		return err
	}
	versionsChanged := make(chan struct{}, 1)
	if node != nil {
		defer node.Close()
		replay.Attach(cluster.NewNonces(store.Opened().(*etcdstore.Store).Client(), cfg.cluster.name, 0))
		opts.Owners = clusternode.Owners{Node: node, Logger: log}
		// In-memory conversations are found from every node; the
		// routes are written in the background (cluster.Routes).
		routes := cluster.NewRoutes(node, 0)
		defer routes.Close()
		opts.MemRoutes = routes
		opts.VersionsChanged = func() {
			select {
			case versionsChanged <- struct{}{}:
			default:
			}
		}
	}
	ev, timeline, stopEvents, err := openEvents(&cfg.events, log, reg)
	if err != nil {
		return err
	}
	// Deferred before the engine's Close: listeners get the events of
	// the last exchanges.
	defer stopEvents()
	opts.Events = ev
	directory, err := cfg.tasks.Directory(log)
	if err != nil {
		return err
	}
	var engine *process.Engine
	tasks := humantask.New(humantask.Options{Store: store, Directory: directory, Logger: log, Registerer: reg, Events: ev, Ended: people.Ended, MaxAuthChecks: cfg.tasks.AuthChecks(),
		Callbacks: func(ep *exchange.Endpoint) exchange.Partner { return engine.CallbackPartner(ep) }})
	defer tasks.Close()
	opts.Partners, opts.InstanceEnded = tasks.Partners(opts.Partners), tasks.InstanceEnded
	opts.SampleEvery, opts.Tracer = cfg.sampleEvery, tr.TracerOrNil()
	if cfg.sampleEvery <= 0 {
		opts.SampleEvery = -1 // off
	}
	opts.ExtensionWaitsEnded = people.ExtensionWaitsEnded
	engine = process.NewEngine(opts)
	people.Bind(tasks, engine)
	if node != nil {
		go clusternode.PublishVersions(ctx, node, engine, versionsChanged, log)
	}
	// After the front door has drained (below), work instances do on their
	// own (after a reply, on timers) is cancelled.
	defer engine.Close()
	front := soap.NewServer(soap.ServerOptions{MaxBodyBytes: cfg.maxBody, Limits: cfg.limits, Logger: log, Registerer: reg, Public: public,
		MaxInflight: cfg.front.maxInflight, QueueWait: cfg.front.queueWait, MaxQueue: cfg.front.maxQueue,
		Adaptive: cfg.front.admission == admissionAdaptive, Tracer: opts.Tracer,
		// A non-anonymous wsa:ReplyTo is an address the client chose: its
		// callback goes out as a call to an address assigned at run time.
		Callbacks: client, CallbackRules: engine.PartnerAllowFor})
	if err := engine.Deploy(procs...); err != nil {
		log.Error("processes skipped", slog.Any("err", err))
	}
	var archiveDir string
	if store.Opened() != nil {
		archiveDir = cfg.dataDir
	}
	deployer, err := hotdeploy.New(hotdeploy.Options{Dir: cfg.deployDir, Data: archiveDir, Logger: log, Engine: engine, Front: front,
		Load: load, Tasks: tasks, OpenStore: func() (string, error) {
			_, err := store.Open()
			return cfg.dataDir, err
		}})
	if err != nil {
		return err
	}
	if err := deployer.Start(procs, bad); err != nil {
		return err
	}
	if store.Opened() != nil {
		rec, err := engine.Recover(ctx)
		if err != nil {
			return err
		}
		log.Info("recovered", slog.Int("waiting", rec.Waiting), slog.Int("timers", rec.Timers), slog.Int("resumed", rec.Resumed),
			slog.Int("suspended", rec.Suspended), slog.Int("orphans", rec.Orphans), slog.Int("broken", rec.Broken),
			slog.Int("outbox", rec.Outbox), slog.Int("damaged_outbox", rec.DamagedOutbox))
		deployer.DropUnused()
	}
	if err := tasks.Recover(ctx); err != nil {
		return err
	}
	if node != nil {
		go clusternode.AdoptTimers(ctx, node, engine, log)
		go clusternode.LeadOutbox(ctx, node, engine, log) // and the retention sweep
		go clusternode.OnMemberLeft(ctx, node, tasks.Reschedule)
		go engine.RunRetention(ctx, process.SweepMemory) // each node its own
	} else {
		go engine.RunRetention(ctx, process.SweepAll)
	}
	for _, p := range engine.Processes() {
		for _, ep := range p.Endpoints {
			if err := front.Handle(ep, engine); err != nil {
				log.Error("endpoint not served", slog.String("process", p.Name.Local), slog.Any("err", err))
				continue
			}
			log.Info("deployed", slog.String("process", p.Name.String()), slog.String("bundle", p.Bundle), slog.Int("version", p.Number), slog.String("path", ep.Path))
		}
	}
	if len(engine.Processes()) == 0 {
		log.Warn("no process deployed", slog.String("deploy", cfg.deployDir))
	}
	// mgmtBackend is what operators act on (mgmt.Backend, plus
	// Subscribe for the live event stream): the management API
	// (internal/admin) and the console, on the main listener unless
	// --admin-listen.
	mgmtBackend := mgmtbackend.New(mgmtbackend.Options{Engine: engine, Deployer: deployer, Timeline: timeline, Gatherer: reg, Tasks: tasks})
	if node != nil {
		mgmtBackend.UseCluster(clusterview.New(clusterview.Options{Name: cfg.cluster.name, Node: node, Local: mgmtBackend,
			TLS: partnerTLS, Timeout: cfg.cluster.fanout}))
	}
	var stream admin.Stream
	if mgmtBackend.Streaming() {
		stream = mgmtBackend
	}
	// The web console beside the API; on --admin-listen it links the
	// endpoints' WSDLs on the SOAP listener.
	consoleOpts := console.Options{Inbox: inbox.New(inbox.Options{Tasks: tasks, Logger: log,
		Outputs: &inbox.BundleSchemas{Tasks: tasks, DirOf: func(b string) string { return filepath.Join(cfg.deployDir, b) }}})}
	if cfg.admin.listen != "" {
		consoleOpts.EndpointBase = opts.BaseURL
	}
	adminTLS, err := cfg.tls.admin(serverTLS)
	if err != nil {
		return err
	}
	var hosts []string
	if cfg.admin.hosts != "" {
		hosts = strings.Split(cfg.admin.hosts, ",")
	}
	adm, err := adminserver.New(adminserver.Options{Tokens: tokens, Hosts: hosts, MaxBundle: cfg.bundle.MaxBundle,
		Main: ln.Addr(), Listen: cfg.admin.listen, Listener: cfg.admin.ln,
		Backend: mgmtBackend, Stream: stream, Console: console.New(consoleOpts), TLS: adminTLS, IdleTimeout: cfg.idleTimeout, Logger: log})
	if err != nil {
		return err
	}
	defer adm.Close()
	probes := health.New(health.Options{Engine: engine, Store: store, Node: node, Logger: log})
	sopts := server.Options{Engine: engine, SOAP: front, Gatherer: reg, Logger: log, Probes: probes,
		Services: map[string]http.Handler{htclient.Path: &htclient.Handler{Tasks: tasks, Logger: log, Public: public}}}
	if !adm.Separate() {
		sopts.Admin = adm.Handler
	}
	if node != nil {
		sopts.Front = clusternode.Forwarder(node, engine, front, log)
	}
	srv := &http.Server{
		Handler:           server.Guard(server.BodyTimeout(server.New(sopts), cfg.front.bodyTimeout)),
		ReadHeaderTimeout: cfg.front.readHeaderTimeout,
		MaxHeaderBytes:    cfg.front.maxHeaderBytes,
		IdleTimeout:       cfg.idleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig:         serverTLS,
		// Paces clients that retry at once after being shed.
		ConnContext: server.GuardConnContext(front.ConnContext),
	}
	if cfg.front.maxConns > 0 || cfg.front.maxConnsPerClient > 0 {
		ln = server.NewLimitListener(ln, server.LimitOptions{Max: cfg.front.maxConns, PerClient: cfg.front.maxConnsPerClient,
			HTTPAnswer: serverTLS == nil, Registerer: reg, Logger: log})
	}
	if serverTLS == nil {
		ln = server.GuardListener(ln)
	}

	mockErr := make(chan error, 1)
	mockCtx, stopMocks := context.WithCancel(context.Background())
	defer stopMocks()
	if cfg.mockPartners {
		var eps []*exchange.Endpoint
		for _, p := range engine.Processes() {
			eps = append(eps, p.PartnerEndpoints()...)
		}
		crm, erp := mockpartner.Addrs(eps)
		log.Info("mock partners", slog.String("crm", crm), slog.String("erp", erp))
		go func() { mockErr <- mockpartner.New(log).Serve(mockCtx, crm, erp) }()
	}

	if cfg.debugAddr != "" {
		dln, err := net.Listen("tcp", cfg.debugAddr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen on --debug-addr %s: %w", cfg.debugAddr, err)
		}
		dsrv := &http.Server{Handler: server.DebugHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = dsrv.Serve(dln) }()
		defer dsrv.Close()
		log.Info("pprof", slog.String("addr", dln.Addr().String()))
	}

	if cfg.deployPoll > 0 {
		pollCtx, stopPoll := context.WithCancel(ctx)
		defer stopPoll()
		go deployer.Run(pollCtx, cfg.deployPoll)
	}
	serveErr := make(chan error, 1)
	probes.Started()
	go func() {
		if serverTLS != nil {
			// The certificate is in TLSConfig already.
			serveErr <- srv.ServeTLS(ln, "", "")
			return
		}
		serveErr <- srv.Serve(ln)
	}()
	adm.Start(scheme, ln.Addr(), log)
	log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("scheme", scheme), slog.String("deploy", cfg.deployDir))
	if cfg.started != nil {
		cfg.started(ln.Addr(), mgmtBackend)
	}

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case err := <-mockErr:
		_ = srv.Close()
		return fmt.Errorf("mock partners: %w", err)
	case <-ctx.Done():
	}
	interrupt := make(chan os.Signal, 1) // a second signal ends the drain
	signal.Notify(interrupt, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(interrupt)
	probes.Drain(cfg.drainDelay, interrupt)
	log.Info("shutting down", slog.Duration("wait", cfg.shutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	adm.Shutdown(sctx) // ends its event streams, which Shutdown would wait for
	err = srv.Shutdown(sctx)
	stopMocks()
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
		return fmt.Errorf("in-flight exchanges still running after %s; connections closed", cfg.shutdownTimeout)
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// defaultGCPercent is the GC target serve sets when GOGC is not set.
const defaultGCPercent = 400

// selfURLs are the addresses of this orchd's own endpoints: the
// listener's (server.SelfURLs) and --public-url's origin, when set (a
// process endpoint there is the same process, behind the proxy).
func selfURLs(scheme string, addr net.Addr, public string) []string {
	urls := server.SelfURLs(scheme, addr)
	if public != "" {
		urls = append(urls, public)
	}
	return urls
}
