package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// scraper reads the target's resident memory and goroutine count from its
// Prometheus /metrics page, if it has one. After the first failure it stops
// asking.
type scraper struct {
	url    string
	client *http.Client
	tr     *http.Transport
	absent bool
	buf    bytes.Buffer
}

// newScraper returns a scraper for <scheme>://<host>/metrics of target.
func newScraper(target string) *scraper {
	s := &scraper{}
	u, err := url.Parse(target)
	if err != nil {
		s.absent = true
		return s
	}
	s.url = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}).String()
	s.tr = &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}
	s.client = &http.Client{Transport: s.tr, Timeout: 2 * time.Second}
	return s
}

func (s *scraper) close() {
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
}

// sample returns the target's RSS in bytes and goroutine count; -1 for
// what it cannot read.
func (s *scraper) sample(ctx context.Context) (rss, goroutines int64) {
	rss, goroutines = -1, -1
	if s.absent {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		s.absent = true
		return
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := s.client.Do(req)
	if err != nil {
		s.absent = true
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.absent = true
		return
	}
	s.buf.Reset()
	if _, err := s.buf.ReadFrom(io.LimitReader(resp.Body, 8<<20)); err != nil {
		return
	}
	rss, goroutines = parseMetrics(s.buf.Bytes())
	if rss < 0 && goroutines < 0 {
		s.absent = true
	}
	return
}

// parseMetrics finds the unlabelled process_resident_memory_bytes and
// go_goroutines samples of a Prometheus text exposition.
func parseMetrics(b []byte) (rss, goroutines int64) {
	rss, goroutines = -1, -1
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		name, val, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "process_resident_memory_bytes":
			dst = &rss
		case "go_goroutines":
			dst = &goroutines
		default:
			continue
		}
		if f, _, _ := bytes.Cut(bytes.TrimSpace(val), []byte(" ")); len(f) > 0 {
			if v, err := strconv.ParseFloat(string(f), 64); err == nil {
				*dst = int64(v)
			}
		}
	}
	return
}
