package odemock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/beevik/etree"
)

// RESTAddr is where the corpus's REST cases (TestRest*) expect ODE's REST
// test server: their processes call http://localhost:8085/test.
const RESTAddr = "127.0.0.1:8085"

// restNS is the namespace of the REST server's answers.
const restNS = "http://www.example.org/restApi"

// REST returns the handler of the HTTP server ODE's
// RestExtensionActivitiesTest ran for the bpel4restlight cases, serving
// /test and the paths below it:
//
//   - GET answers getResponse holding "GET response data".
//   - POST and PUT read the request body's root element and answer
//     postResponse or putResponse holding the text of its value child
//     followed by " Result" (" Result" alone when it has none); a body
//     that is not XML gets 500 with no body.
//   - DELETE on /test answers deleteResponse holding "DELETE Method Test";
//     on any other path, 404 with no body.
//
// Any other method or path gets 404 with no body. Answers are
// {http://www.example.org/restApi} elements, status 200.
func REST(log *slog.Logger) http.Handler {
	return restHandler{log: orDiscard(log)}
}

type restHandler struct{ log *slog.Logger }

func (h restHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/test" && !strings.HasPrefix(r.URL.Path, "/test/") {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodGet:
		h.answer(w, "getResponse", "GET response data")
	case http.MethodPost, http.MethodPut:
		doc := etree.NewDocument()
		_, err := doc.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil && doc.Root() == nil {
			err = errors.New("no root element")
		}
		if err != nil {
			h.log.Warn("odemock rest: request body is not XML", "method", r.Method, "err", err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		value := ""
		for _, c := range doc.Root().ChildElements() {
			if c.Tag == "value" {
				value = c.Text()
			}
		}
		h.answer(w, strings.ToLower(r.Method)+"Response", value+" Result")
	case http.MethodDelete:
		if r.URL.Path != "/test" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		h.answer(w, "deleteResponse", "DELETE Method Test")
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// answer writes <service:name><service:result>result</...></...>.
func (h restHandler) answer(w http.ResponseWriter, name, result string) {
	doc := etree.NewDocument()
	root := doc.CreateElement("service:" + name)
	root.CreateAttr("xmlns:service", restNS)
	root.CreateElement("service:result").SetText(result)
	w.Header().Set("Content-Type", "application/xml")
	if _, err := doc.WriteTo(w); err != nil {
		h.log.Warn("odemock rest: writing the answer", "err", err)
	}
}

// RESTServer is the REST test server on its listener.
type RESTServer struct {
	// URL is the server's /test resource.
	URL string
	srv *http.Server
}

// StartREST serves REST on addr ("127.0.0.1:0" for a port chosen by the
// system) until Close or ctx ends. It fails when addr cannot be bound.
func StartREST(ctx context.Context, log *slog.Logger, addr string) (*RESTServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("odemock rest: %w", err)
	}
	srv := &http.Server{Handler: REST(log), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	s := &RESTServer{URL: "http://" + ln.Addr().String() + "/test", srv: srv}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	return s, nil
}

// Close stops the server.
func (s *RESTServer) Close() error {
	if err := s.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
