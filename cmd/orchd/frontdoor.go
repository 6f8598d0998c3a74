package main

import (
	"flag"
	"fmt"
	"time"
)

// frontDoorConfig bounds what clients may hold of the server: slow or idle
// connections, their number, and the exchanges served at once.
type frontDoorConfig struct {
	readHeaderTimeout time.Duration
	bodyTimeout       time.Duration
	maxHeaderBytes    int
	maxConns          int
	maxConnsPerClient int
	wssecMaxChecks    int
	maxInflight       int
	queueWait         time.Duration
	maxQueue          int
	admission         string // admissionAdaptive or admissionFixed
}

// The admission modes of --admission.
const (
	admissionAdaptive = "adaptive"
	admissionFixed    = "fixed"
)

// Defaults of the front door's bounds. defaultMaxInflight and
// defaultQueueWait come from measurement (README, Limits and failure
// behaviour): the purchase order saturates two cores from about 16
// clients on, so 64 exchanges in flight keep the CPUs busy with partners
// answering in a few milliseconds. The queue is bounded by its length
// (defaultMaxQueue): a closed loop of up to 64 + 256 clients never fills
// it and is never shed, however slowly it is served (unless the queue
// stands still for a second); an overload fills it, is shed at once, and
// a request in the overflowing queue that finds no slot within 100ms
// would only wait behind more than a full round of exchanges.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultBodyTimeout       = 30 * time.Second
	defaultMaxHeaderBytes    = 64 << 10
	defaultMaxConns          = 4096
	// defaultMaxConnsPerClient is a quarter of defaultMaxConns: one
	// address (a client, or a proxy in front of many) cannot hold the
	// server's connections, while a load generator or proxy with the
	// few hundred connections the admission queue ever serves at once
	// (defaultMaxInflight + defaultMaxQueue) is far from it.
	defaultMaxConnsPerClient = defaultMaxConns / 4
	defaultMaxInflight       = 64
	defaultQueueWait         = 100 * time.Millisecond
	defaultMaxQueue          = 4 * defaultMaxInflight
	defaultAdmission         = admissionFixed
)

func frontDoorFlags(fs *flag.FlagSet, c *frontDoorConfig) {
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", defaultReadHeaderTimeout, "close a connection whose request headers take longer than this to arrive (0: the default)")
	fs.DurationVar(&c.bodyTimeout, "body-timeout", defaultBodyTimeout, "close a connection whose request body takes longer than this to arrive, from the end of its headers (0: no bound)")
	fs.IntVar(&c.maxHeaderBytes, "max-http-header-bytes", defaultMaxHeaderBytes, "largest HTTP request header block, in bytes; larger gets HTTP 431 (0: the default)")
	fs.IntVar(&c.maxConns, "max-conns", defaultMaxConns, "most client connections open at once; one more is answered HTTP 503 and closed at once (0: no bound)")
	fs.IntVar(&c.maxConnsPerClient, "max-conns-per-client", defaultMaxConnsPerClient, "most connections one client IP address may hold open at once, loopback addresses included (each its own client); one more is answered HTTP 503 and closed at once; behind a proxy every client has the proxy's address (0: no share)")
	fs.IntVar(&c.wssecMaxChecks, "wssec-max-checks", 0, "most UsernameToken password checks (bcrypt comparisons) running at once; one more is answered at once with HTTP 503 and a Server fault (0: the number of CPUs; negative: no bound)")
	fs.IntVar(&c.maxInflight, "max-inflight", defaultMaxInflight, "most SOAP exchanges served at once; more wait in turn in a queue of --max-queue and are shed with HTTP 503 and a Server fault when it is full (see --queue-wait) (0: no bound)")
	fs.DurationVar(&c.queueWait, "queue-wait", defaultQueueWait, "longest a SOAP request waits for a --max-inflight slot in a queue that overflowed meanwhile (a queue that never overflowed is shed only after it stood still, none of its requests admitted, for 1s or this if longer) (0: no queue)")
	fs.IntVar(&c.maxQueue, "max-queue", defaultMaxQueue, "most SOAP requests waiting in turn for a slot; one more is shed at once (0: 4 x --max-inflight)")
	fs.StringVar(&c.admission, "admission", defaultAdmission, "how SOAP exchanges are admitted: adaptive (a limit on all exchanges in flight, partner waits included, from --max-inflight up, grown while their latency stays low and cut back when it grows) or fixed (--max-inflight slots for exchanges using the CPU)")
}

// check refuses bounds that cannot mean anything, and puts the defaults
// in place of a zero read-header timeout and header size (a config built
// without its flags).
func (c *frontDoorConfig) check() error {
	if c.readHeaderTimeout == 0 {
		c.readHeaderTimeout = defaultReadHeaderTimeout
	}
	if c.maxHeaderBytes == 0 {
		c.maxHeaderBytes = defaultMaxHeaderBytes
	}
	switch {
	case c.readHeaderTimeout < 0:
		return fmt.Errorf("--read-header-timeout %s: want a positive duration", c.readHeaderTimeout)
	case c.bodyTimeout < 0:
		return fmt.Errorf("--body-timeout %s: may not be negative", c.bodyTimeout)
	case c.maxHeaderBytes < 0:
		return fmt.Errorf("--max-http-header-bytes %d: want a positive number", c.maxHeaderBytes)
	case c.maxConns < 0:
		return fmt.Errorf("--max-conns %d: may not be negative", c.maxConns)
	case c.maxConnsPerClient < 0:
		return fmt.Errorf("--max-conns-per-client %d: may not be negative", c.maxConnsPerClient)
	case c.maxInflight < 0:
		return fmt.Errorf("--max-inflight %d: may not be negative", c.maxInflight)
	case c.queueWait < 0:
		return fmt.Errorf("--queue-wait %s: may not be negative", c.queueWait)
	case c.maxQueue < 0:
		return fmt.Errorf("--max-queue %d: may not be negative", c.maxQueue)
	}
	switch c.admission {
	case "":
		c.admission = defaultAdmission
	case admissionAdaptive, admissionFixed:
	default:
		return fmt.Errorf("--admission %q: want %s or %s", c.admission, admissionAdaptive, admissionFixed)
	}
	return nil
}
