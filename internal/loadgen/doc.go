// Package loadgen is a closed-loop load generator for SOAP (or any
// request-response HTTP) endpoints: what The Grinder was used for, in one
// package that also holds the "orchd bench" command's flags and run (cli.go).
//
// A run goes through a list of concurrency levels. At each level N worker
// goroutines each hold one keep-alive connection to the target and send the
// next request as soon as the previous response has been read and
// validated (closed loop: the offered load adapts to the server, no request
// is queued inside the generator). A level lasts Warmup plus Duration;
// only responses that complete inside the Duration window are counted.
//
// Open loop (Config.Rates): each level is an arrival rate instead. A
// dispatcher hands request i, due at start + i/rate, to an idle worker
// when it is due, whether or not earlier requests were answered; with
// MaxOutstanding requests outstanding (every worker busy) a due request is
// not sent and is counted as unsent. Latency is measured from when a
// request was due, so time it spent waiting for the generator counts (no
// coordinated omission). This is how a server is offered more than it can
// serve: a closed loop slows down with the server instead. Pace runs the
// same pacer for a caller that builds and checks each request itself (the
// soak test's mix of requests with unique ids).
//
// Every response is validated: the HTTP status must be 2xx, the body must
// not be a SOAP 1.1 or 1.2 Fault, and, when an Expect expression is set,
// that XPath 1.0 expression must be true on the response. An HTTP 503 is
// counted as shed (the server's overload answer), apart from successes and
// from the other failed exchanges, which are counted as errors, and the first distinct error messages
// are kept for the report. Latency percentiles of successful exchanges come
// from one HDR histogram per worker, merged when the level ends, so nothing
// is locked per request.
//
// With two targets (A and B) the levels alternate A@N1, B@N1, A@N2, B@N2,
// ... so that both see the same machine conditions, and the report gives,
// per level, the ratio A tx/s / B tx/s and A p99 / B p99.
//
// With an Interval, the throughput of each interval is recorded (for long
// stability runs), together with the target's resident memory and
// goroutine count when its /metrics page exposes
// process_resident_memory_bytes and go_goroutines.
package loadgen
