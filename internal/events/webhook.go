package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Webhook is a listener that POSTs each batch as a JSON array to URL.
// A failed POST (a network error, a 5xx or 429 answer) is retried after
// Backoff, doubling, until the dispatcher's budget ends; a 4xx other
// than 429 is not retried.
type Webhook struct {
	URL string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Backoff is the first delay between attempts; zero means 100ms.
	Backoff time.Duration
}

// Name is "webhook:" and the URL.
func (w *Webhook) Name() string { return "webhook:" + w.URL }

// Deliver POSTs the batch, retrying until ctx ends.
func (w *Webhook) Deliver(ctx context.Context, batch []Event) error {
	body, err := json.Marshal(batch)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.URL, err)
	}
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	backoff := w.Backoff
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	for attempt := 1; ; attempt++ {
		retry, err := w.post(ctx, client, body)
		if err == nil || !retry {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("webhook %s: gave up after %d attempts: %w (last: %v)", w.URL, attempt, ctx.Err(), err)
		case <-t.C:
		}
		backoff *= 2
	}
}

func (w *Webhook) post(ctx context.Context, client *http.Client, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("webhook %s: %w", w.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return true, fmt.Errorf("webhook %s: %w", w.URL, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("webhook %s: %s", w.URL, resp.Status)
	}
	return false, fmt.Errorf("webhook %s: %s", w.URL, resp.Status)
}
