package main

import (
	"flag"
	"net"
)

// adminConfig are orchd serve's management API flags.
type adminConfig struct {
	tokenFile string
	listen    string
	// ln is --admin-listen bound early (serve binds it before joining a
	// cluster, whose membership publishes its address); nil:
	// adminserver.New binds it.
	ln net.Listener
}

func adminFlags(fs *flag.FlagSet, c *adminConfig) {
	fs.StringVar(&c.tokenFile, "admin-token-file", "", "file holding the bearer token that mutations of the management API need (without it the API is read-only)")
	fs.StringVar(&c.listen, "admin-listen", "", "serve the management API (/api/v1/) and the console (/console/) on this address instead of --listen")
}
