package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// writeTimeout bounds one write to an event stream's client: a client
// that does not read is cut off rather than waited for.
const writeTimeout = 10 * time.Second

// events is GET /api/v1/events, the server-sent event stream.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r, nil); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if a.opts.Stream == nil {
		writeError(w, http.StatusServiceUnavailable, "live instance events are off: start orchd with --timeline N")
		return
	}
	rc := http.NewResponseController(w)
	evs, cancel := a.opts.Stream.Subscribe()
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	// send writes one frame and flushes it within writeTimeout.
	send := func(frame []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := w.Write(frame); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	stats := func() bool {
		ps, err := a.opts.Backend.Processes(r.Context())
		if err != nil {
			return send(fmt.Appendf(nil, ": stats: %s\n\n", oneLine(err.Error())))
		}
		return send(frame("stats", ps))
	}
	if !send([]byte(": orchd instance events\nretry: 2000\n\n")) || !stats() {
		return
	}
	statsTick := time.NewTicker(a.opts.StatsEvery)
	defer statsTick.Stop()
	beat := time.NewTicker(a.opts.Heartbeat)
	defer beat.Stop()
	for {
		var ok bool
		select {
		case <-r.Context().Done():
			return
		case <-a.opts.Done:
			return
		case ev, open := <-evs:
			if !open {
				// Dropped for falling behind: the client reconnects
				// (retry) and gets a fresh subscription.
				send([]byte(": dropped: the client fell behind the events\n\n"))
				return
			}
			ok = send(frame("instance", ev))
		case <-statsTick.C:
			ok = stats()
		case <-beat.C:
			ok = send([]byte(": heartbeat\n\n"))
		}
		if !ok {
			return
		}
	}
}

// frame is one server-sent event: its name and v as JSON on one data line.
func frame(event string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorBody{Error: err.Error()})
	}
	out := make([]byte, 0, len(b)+len(event)+16)
	out = append(out, "event: "...)
	out = append(out, event...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, "\n\n"...)
}

// oneLine keeps a comment on one line.
func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			return s[:i]
		}
	}
	return s
}
