package loadgen

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// nsFlags collects repeated --ns prefix=uri flags.
type nsFlags map[string]string

func (n nsFlags) String() string { return "" }

func (n nsFlags) Set(v string) error {
	p, u, ok := strings.Cut(v, "=")
	if !ok || p == "" || u == "" {
		return fmt.Errorf("want prefix=namespace-uri, got %q", v)
	}
	n[p] = u
	return nil
}

// Command defines the flags of the orchd bench command on fs and returns
// its run: the load generator, closed loop or, with --rate, open loop,
// printing its report on stdout (exit 1 when a measured request failed or
// missed --expect, 2 on a usage error).
func Command(fs *flag.FlagSet) func(ctx context.Context, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	target := fs.String("url", DefaultURL, "SOAP endpoint to load (A)")
	vs := fs.String("vs", "", "second endpoint (B): levels alternate A, B, A, B, ... and the ratios A/B are printed")
	bodyFile := fs.String("body", "", "file holding the request body (default: the example purchase order)")
	action := fs.String("soap-action", DefaultSOAPAction, `SOAPAction header (quoted when sent); "" sends none`)
	ctype := fs.String("content-type", DefaultContentType, "Content-Type of the requests")
	levels := fs.String("concurrency", "1,16,64,256,1000", "comma-separated numbers of closed-loop clients, one level each")
	rates := fs.String("rate", "", "open loop: comma-separated arrival rates in requests per second (\"2000,6000/s\"), one level each, sent on schedule whether answered or not; --concurrency is then ignored")
	maxOut := fs.Int("max-outstanding", DefaultMaxOutstanding, "open loop: most requests sent and not yet answered (workers and connections); a request due beyond it is counted unsent")
	duration := fs.Duration("duration", DefaultDuration, "measured time per level and target")
	warmup := fs.Duration("warmup", DefaultWarmup, "unmeasured time before each level")
	timeout := fs.Duration("timeout", DefaultTimeout, "timeout of one request")
	expect := fs.String("expect", "", "XPath 1.0 expression that must be true on every response (prefixes soapenv, soap12, po, crm, erp are bound)")
	ns := nsFlags{}
	fs.Var(ns, "ns", "prefix=namespace-uri binding for --expect (repeatable)")
	interval := fs.Duration("interval", 0, "report tx/s (and the target's RSS and goroutines, from its /metrics) every interval")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout, no progress")
	return func(ctx context.Context, fs *flag.FlagSet, stdout, stderr io.Writer) int {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "orchd bench: unexpected argument %q\n", fs.Arg(0))
			return 2
		}
		cfg := Config{
			Targets:     []string{*target},
			SOAPAction:  *action,
			ContentType: *ctype,
			Duration:    *duration,
			Warmup:      *warmup,
			Timeout:     *timeout,
			Interval:    *interval,
			Body:        DefaultBody(),
		}
		if *vs != "" {
			cfg.Targets = append(cfg.Targets, *vs)
		}
		var err error
		if cfg.Concurrency, err = ParseConcurrency(*levels); err != nil {
			fmt.Fprintln(stderr, "orchd bench:", err)
			return 2
		}
		if *rates != "" {
			if cfg.Rates, err = ParseRates(*rates); err != nil {
				fmt.Fprintln(stderr, "orchd bench:", err)
				return 2
			}
			if *maxOut < 1 {
				fmt.Fprintf(stderr, "orchd bench: --max-outstanding %d: want at least 1\n", *maxOut)
				return 2
			}
			cfg.MaxOutstanding = *maxOut
		}
		if *bodyFile != "" {
			if cfg.Body, err = os.ReadFile(*bodyFile); err != nil {
				fmt.Fprintln(stderr, "orchd bench:", err)
				return 2
			}
		}
		if *expect != "" {
			if cfg.Expect, err = NewExpect(*expect, ns); err != nil {
				fmt.Fprintln(stderr, "orchd bench:", err)
				return 2
			}
		}
		if !*asJSON {
			cfg.Progress = stderr
			fmt.Fprintf(stdout, "A = %s\n", *target)
			if *vs != "" {
				fmt.Fprintf(stdout, "B = %s\n", *vs)
			}
			fmt.Fprintf(stdout, "%d s per level after %s warmup; latency of successful exchanges\n", int(duration.Seconds()), *warmup)
			if len(cfg.Rates) > 0 {
				fmt.Fprintf(stdout, "open loop, at most %d outstanding; latency from when each request was due\n", cfg.MaxOutstanding)
				fmt.Fprintln(stdout, OpenLevelHeader)
			} else {
				fmt.Fprintln(stdout, LevelHeader)
			}
			cfg.OnLevel = func(l LevelResult) { WriteLevel(stdout, l) }
			cfg.OnInterval = func(label string, n int, s IntervalSample) {
				fmt.Fprintf(stdout, "  %s@%d +%.0fs: %.1f tx/s, %d errors, %d shed%s\n", label, n, s.Elapsed, s.TxPerSec, s.Errors, s.Shed, targetStats(s))
			}
		}
		rep, err := Run(ctx, cfg)
		if rep == nil {
			fmt.Fprintln(stderr, "orchd bench:", err)
			return 2
		}
		if *asJSON {
			if werr := rep.WriteJSON(stdout); werr != nil {
				fmt.Fprintln(stderr, "orchd bench:", werr)
				return 1
			}
		} else if werr := rep.WriteComparison(stdout); werr != nil {
			fmt.Fprintln(stderr, "orchd bench:", werr)
			return 1
		}
		if err != nil {
			if errors.Is(err, context.Canceled) {
				fmt.Fprintln(stderr, "orchd bench: interrupted")
			} else {
				fmt.Fprintln(stderr, "orchd bench:", err)
			}
			return 1
		}
		if failed, total := failures(rep); failed > 0 {
			fmt.Fprintf(stderr, "orchd bench: %d of %d measured requests failed (an error, or a response --expect is false of)\n", failed, total)
			return 1
		}
		return 0
	}
}

// failures counts the measured requests of rep that failed (an error or
// a missed --expect; shed exchanges, answered 503, apart) and all the
// measured requests.
func failures(rep *Report) (failed, total int64) {
	for _, l := range rep.Levels {
		failed += l.Errors
		total += l.Errors + l.Successes + l.Shed
	}
	return failed, total
}

// targetStats formats the target's RSS and goroutines, when known.
func targetStats(s IntervalSample) string {
	var b strings.Builder
	if s.RSSBytes >= 0 {
		fmt.Fprintf(&b, ", rss %.1f MiB", float64(s.RSSBytes)/(1<<20))
	}
	if s.Goroutines >= 0 {
		fmt.Fprintf(&b, ", %d goroutines", s.Goroutines)
	}
	return b.String()
}
