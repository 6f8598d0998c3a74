package mgmtclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/orchd/orchd/internal/mgmt"
)

// MaxAnswerBytes bounds an answer the client reads.
const MaxAnswerBytes = 64 << 20

// Options configure a Client. The zero value sends no credentials with
// http.DefaultClient.
type Options struct {
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
	// Token is sent as "Authorization: Bearer <Token>"; empty sends none
	// (unless ForwardAuthorization).
	Token string
	// ForwardAuthorization sends the Authorization header of the request
	// being served (mgmt.AuthorizationOf the call's context), for a node
	// that asks another on its caller's behalf. Token wins when both are
	// set.
	ForwardAuthorization bool
	// User and Password, when User is set, are a person's credentials
	// (the people directory's), sent as "Authorization: Basic" instead
	// of any token: the task routes take them, and nothing else does.
	User, Password string
}

// Client calls the management API of one orchd.
type Client struct {
	base string // scheme://host:port, no trailing slash
	o    Options
}

// New returns a client of the API at base: a URL such as
// http://127.0.0.1:8080 (a missing scheme means http; a trailing /api/v1
// is dropped). A base that is not such a URL is an error saying so.
func New(base string, o Options) (*Client, error) {
	b := strings.TrimRight(base, "/")
	if !strings.Contains(b, "://") {
		b = "http://" + b
	}
	u, err := url.Parse(b)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q: want a URL such as http://127.0.0.1:8080", base)
	}
	if o.HTTP == nil {
		o.HTTP = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(b, "/api/v1"), o: o}, nil
}

// Error is the API's refusal: a non-2xx answer. It unwraps to the
// sentinel of internal/mgmt its status stands for (ErrNotFound for 404,
// ErrConflict for 409, ErrInvalid for 400 and 422, ErrUnauthorized for
// 401, ErrForbidden for 403, ErrUnavailable for any other: 503, 500).
type Error struct {
	Status  int
	Message string
	// Problems are a failed deploy's problems, one a line.
	Problems []string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s (%d)", e.Message, e.Status)
	for _, l := range e.Problems {
		s += "\n  " + l
	}
	return s
}

// Unwrap is the sentinel of e's status.
func (e *Error) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound:
		return mgmt.ErrNotFound
	case http.StatusConflict:
		return mgmt.ErrConflict
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return mgmt.ErrInvalid
	case http.StatusUnauthorized:
		return mgmt.ErrUnauthorized
	case http.StatusForbidden:
		return mgmt.ErrForbidden
	}
	return mgmt.ErrUnavailable
}

// unreachable is a request that got no answer; it unwraps to
// mgmt.ErrUnavailable and to the transport's error.
type unreachable struct{ err error }

func (u unreachable) Error() string   { return u.err.Error() }
func (u unreachable) Unwrap() []error { return []error{mgmt.ErrUnavailable, u.err} }

// Do sends method path (under /api/v1, e.g. "/instances") with query and
// body (a bundle's zip, or nil), and decodes a 2xx answer's JSON into out
// (unless nil). It returns the answer's bytes. A non-2xx answer is an
// *Error; no answer wraps mgmt.ErrUnavailable; a context that ended is
// its error.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body io.Reader, out any) ([]byte, error) {
	u := c.base + "/api/v1" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	switch {
	case c.o.User != "":
		req.SetBasicAuth(c.o.User, c.o.Password)
	case c.o.Token != "":
		req.Header.Set("Authorization", "Bearer "+c.o.Token)
	case c.o.ForwardAuthorization:
		if h := mgmt.AuthorizationOf(ctx); h != "" {
			req.Header.Set("Authorization", h)
		}
	}
	if body != nil {
		ct := "application/zip"
		if _, ok := body.(jsonBody); ok {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := c.o.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("orchd at %s: %w", c.base, unreachable{err})
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error  string   `json:"error"`
			Errors []string `json:"errors"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return nil, &Error{Status: resp.StatusCode, Message: e.Error, Problems: e.Errors}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, fmt.Errorf("%s %s: the answer is not what the client expects: %w", method, u, err)
		}
	}
	return b, nil
}

// Get is Do with GET and no body.
func (c *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	_, err := c.Do(ctx, http.MethodGet, path, query, nil, out)
	return err
}

// jsonBody is a body Do sends as application/json.
type jsonBody struct{ *bytes.Reader }

// PostJSON is Do with POST and in encoded as JSON.
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	_, err = c.Do(ctx, http.MethodPost, path, nil, jsonBody{bytes.NewReader(b)}, out)
	return err
}
