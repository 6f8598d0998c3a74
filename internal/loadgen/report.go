package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Latency summarizes the latency of the successful exchanges of a level,
// in milliseconds.
type Latency struct {
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	Max  float64 `json:"max_ms"`
	Mean float64 `json:"mean_ms"`
}

// ErrorSample is one distinct error message and how often it was seen.
type ErrorSample struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// IntervalSample is the throughput of one interval of a level.
type IntervalSample struct {
	// Elapsed is the time since the start of the measured window, at the
	// end of the interval, in seconds.
	Elapsed   float64 `json:"elapsed_s"`
	TxPerSec  float64 `json:"tx_per_s"`
	Successes int64   `json:"successes"`
	Errors    int64   `json:"errors"`
	Shed      int64   `json:"shed"`
	// RSSBytes and Goroutines are read from the target's /metrics; -1
	// when it does not expose them.
	RSSBytes   int64 `json:"rss_bytes"`
	Goroutines int64 `json:"goroutines"`
}

// LevelResult is the outcome of one target at one concurrency level.
type LevelResult struct {
	// Label is "A" or "B".
	Label       string  `json:"label"`
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency"`
	DurationS   float64 `json:"duration_s"`
	// Rate is the arrival rate of an open-loop level (requests per
	// second), whose Concurrency is its bound on outstanding requests;
	// 0 for a closed-loop level.
	Rate      float64 `json:"rate,omitempty"`
	Successes int64   `json:"successes"`
	Errors    int64   `json:"errors"`
	// Shed counts the exchanges the server shed (HTTP 503), apart from
	// errors.
	Shed int64 `json:"shed"`
	// Unsent counts the requests of an open-loop level due in the window
	// but not sent, because MaxOutstanding were outstanding.
	Unsent int64 `json:"unsent,omitempty"`
	// TxPerSec counts successful exchanges only.
	TxPerSec     float64          `json:"tx_per_s"`
	Latency      Latency          `json:"latency"`
	ErrorSamples []ErrorSample    `json:"error_samples,omitempty"`
	Intervals    []IntervalSample `json:"intervals,omitempty"`
}

// Comparison puts A and B side by side at one concurrency level.
type Comparison struct {
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate,omitempty"`
	// TxRatio is A tx/s divided by B tx/s; P99Ratio is A p99 divided by
	// B p99. Both are 0 when the divisor is 0.
	TxRatio  float64 `json:"tx_ratio"`
	P99Ratio float64 `json:"p99_ratio"`
	// a and b are the paired levels the ratios come from.
	a, b LevelResult
}

// Report is the outcome of a run.
type Report struct {
	// A and B are the target URLs; B is empty without a comparison.
	A string `json:"a"`
	B string `json:"b,omitempty"`
	// Levels in the order they ran (A@N1, B@N1, A@N2, ...).
	Levels      []LevelResult `json:"levels"`
	Comparisons []Comparison  `json:"comparisons,omitempty"`
	// Complete is false when the run was interrupted.
	Complete bool `json:"complete"`
}

// compare fills r.Comparisons from the levels.
func (r *Report) compare() {
	r.Comparisons = nil
	if r.B == "" {
		return
	}
	for i := 0; i+1 < len(r.Levels); i += 2 {
		a, b := r.Levels[i], r.Levels[i+1]
		if a.Label != "A" || b.Label != "B" || a.Concurrency != b.Concurrency || a.Rate != b.Rate {
			continue
		}
		r.Comparisons = append(r.Comparisons, Comparison{
			Concurrency: a.Concurrency,
			Rate:        a.Rate,
			TxRatio:     ratio(a.TxPerSec, b.TxPerSec),
			P99Ratio:    ratio(a.Latency.P99, b.Latency.P99),
			a:           a,
			b:           b,
		})
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(a/b*1000) / 1000
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing JSON report: %w", err)
	}
	return nil
}

// LevelHeader is the header line of the per-level table that WriteLevel
// writes rows of closed-loop levels of.
const LevelHeader = "target  clients       tx/s    p50 ms    p90 ms    p99 ms    max ms    errors      shed"

// OpenLevelHeader is the header of the table of open-loop levels: the
// arrival rate instead of the clients, and the unsent requests.
const OpenLevelHeader = "target   rate/s       tx/s    p50 ms    p90 ms    p99 ms    max ms    errors      shed    unsent"

// WriteLevel writes one row of the per-level table (LevelHeader's, or
// OpenLevelHeader's for an open-loop level), then its first error
// messages, indented.
func WriteLevel(w io.Writer, l LevelResult) {
	if l.Rate > 0 {
		fmt.Fprintf(w, "%-6s  %7.0f  %9.1f  %8.2f  %8.2f  %8.2f  %8.2f  %8d  %8d  %8d\n",
			l.Label, l.Rate, l.TxPerSec, l.Latency.P50, l.Latency.P90, l.Latency.P99, l.Latency.Max, l.Errors, l.Shed, l.Unsent)
	} else {
		fmt.Fprintf(w, "%-6s  %7d  %9.1f  %8.2f  %8.2f  %8.2f  %8.2f  %8d  %8d\n",
			l.Label, l.Concurrency, l.TxPerSec, l.Latency.P50, l.Latency.P90, l.Latency.P99, l.Latency.Max, l.Errors, l.Shed)
	}
	for _, e := range l.ErrorSamples {
		fmt.Fprintf(w, "        %d x %s\n", e.Count, e.Message)
	}
}

// WriteTable writes the report for people: the targets, one row per level,
// and with two targets the A/B comparison per concurrency level.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "A = %s\n", r.A)
	if r.B != "" {
		fmt.Fprintf(w, "B = %s\n", r.B)
	}
	if len(r.Levels) > 0 && r.Levels[0].Rate > 0 {
		fmt.Fprintln(w, OpenLevelHeader)
	} else {
		fmt.Fprintln(w, LevelHeader)
	}
	for _, l := range r.Levels {
		WriteLevel(w, l)
	}
	return r.WriteComparison(w)
}

// WriteComparison writes the A/B comparison table, if there is one.
func (r *Report) WriteComparison(w io.Writer) error {
	if len(r.Comparisons) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nratio = A / B (tx/s: above 1 means A is faster; p99: below 1 means A answers sooner)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	col := "clients"
	if r.Comparisons[0].Rate > 0 {
		col = "rate"
	}
	fmt.Fprintln(tw, col+"\tA tx/s\tB tx/s\ttx/s A/B\tA p99 ms\tB p99 ms\tp99 A/B\t")
	for _, c := range r.Comparisons {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.3f\t%.2f\t%.2f\t%.3f\t\n",
			level{clients: c.Concurrency, rate: c.Rate}.name(), c.a.TxPerSec, c.b.TxPerSec, c.TxRatio, c.a.Latency.P99, c.b.Latency.P99, c.P99Ratio)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}
