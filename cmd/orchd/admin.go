package main

import (
	"flag"
	"net"
)

// adminConfig are orchd serve's management API flags.
type adminConfig struct {
	tokenFile     string
	readTokenFile string
	hosts         string
	listen        string
	// ln is --admin-listen bound early (serve binds it before joining a
	// cluster, whose membership publishes its address); nil:
	// adminserver.New binds it.
	ln net.Listener
}

func adminFlags(fs *flag.FlagSet, c *adminConfig) {
	fs.StringVar(&c.tokenFile, "admin-token-file", "", "file holding the admin bearer token: with it every management API request (reads, the event stream) needs a token and mutations need this one; the token must be at least 16 bytes; without any token the API and console are read-only on a loopback listener and off on any other (--listen or --admin-listen)")
	fs.StringVar(&c.readTokenFile, "admin-read-token-file", "", "file holding a second bearer token (at least 16 bytes) that reads the management API but mutates nothing")
	fs.StringVar(&c.hosts, "admin-hosts", "", "comma-separated host names the management API and console answer besides the listener's own address (the Host header is checked against DNS rebinding)")
	fs.StringVar(&c.listen, "admin-listen", "", "serve the management API (/api/v1/) and the console (/console/) on this address instead of --listen; off without a token unless it is loopback")
}
