package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBenchCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><po:purchaseOrderAck xmlns:po="urn:example:po"><po:status>ACCEPTED</po:status></po:purchaseOrderAck></soapenv:Body></soapenv:Envelope>`)
	}))
	defer srv.Close()
	common := []string{"bench", "--url", srv.URL, "--vs", srv.URL + "/b", "--concurrency", "1,2",
		"--duration", "200ms", "--warmup", "50ms", "--expect", "//po:status = 'ACCEPTED'"}

	var out, errb bytes.Buffer
	if code := run(context.Background(), common, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"A = " + srv.URL, "tx/s A/B", "\nA             1", "\nB             2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	errb.Reset()
	if code := run(context.Background(), append(common, "--json"), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Levels      []json.RawMessage
		Comparisons []json.RawMessage
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Levels) != 4 || len(rep.Comparisons) != 2 {
		t.Fatalf("JSON report (%v):\n%s", err, out.String())
	}
	if errb.Len() != 0 {
		t.Errorf("--json wrote to stderr: %s", errb.String())
	}

	out.Reset()
	errb.Reset()
	open := []string{"bench", "--url", srv.URL, "--rate", "50/s,100", "--max-outstanding", "4", "--duration", "200ms", "--warmup", "50ms"}
	if code := run(context.Background(), open, &out, &errb); code != 0 {
		t.Fatalf("open loop: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"open loop, at most 4 outstanding", "rate/s", "unsent", "\nA            50", "\nA           100"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("open-loop output lacks %q:\n%s", want, out.String())
		}
	}

	for _, bad := range [][]string{
		{"bench", "--rate", "0"},
		{"bench", "--rate", "fast"},
		{"bench", "--rate", "100", "--max-outstanding", "0"},
		{"bench", "--concurrency", "0"},
		{"bench", "--expect", "//po:status["},
		{"bench", "--body", "/nonexistent/body.xml"},
		{"bench", "--url", "ftp://x/"},
		{"bench", "extra"},
	} {
		if code := run(context.Background(), bad, io.Discard, io.Discard); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestBenchFails: orchd bench exits 1, saying how many requests failed,
// when a response misses --expect or is an error; 0 when all pass.
func TestBenchFails(t *testing.T) {
	answer := func(status int, ack string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(status)
			io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><po:purchaseOrderAck xmlns:po="urn:example:po"><po:status>`+ack+`</po:status></po:purchaseOrderAck></soapenv:Body></soapenv:Envelope>`)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, tc := range []struct {
		name, url string
		code      int
		stderr    string
	}{
		{"every response as expected", answer(200, "ACCEPTED"), 0, ""},
		{"every response misses --expect", answer(200, "REJECTED"), 1, "measured requests failed"},
		{"every response is a server error", answer(500, "ACCEPTED"), 1, "measured requests failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := []string{"bench", "--url", tc.url, "--concurrency", "1", "--duration", "200ms", "--warmup", "20ms", "--expect", "//po:status = 'ACCEPTED'"}
			code := run(context.Background(), args, &out, &errb)
			if code != tc.code || (tc.stderr != "" && !strings.Contains(errb.String(), tc.stderr)) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
		})
	}
}
