package process

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
)

// Why a service port named in deploy.xml has no usable WSDL description;
// partnerEndpoint falls back to a default endpoint for both.
var (
	errNoService = errors.New("not defined in any WSDL of the bundle")
	errNoBinding = errors.New("has no binding")
)

// loadUnimported loads, into w.extra, every .wsdl file of the bundle
// folder tree that no BPEL import reached. ODE registered every WSDL of a
// bundle, so deploy.xml may name a service defined in a WSDL that no
// process imports. Those files are only consulted for services, and their
// problems are not the bundle's: they are ignored.
func (w *wsdlSet) loadUnimported() {
	var names []string
	_ = filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".wsdl") {
			return nil
		}
		rel, err := filepath.Rel(w.dir, p)
		if err == nil && !w.loaded[filepath.ToSlash(rel)] {
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	w.extra = newWSDLSet(w.dir, &Errors{})
	w.extra.shared = w.shared
	for _, n := range names {
		w.extra.loadWSDL(n, bpel.Pos{File: n})
	}
	w.extra.resolveMessages()
}

// partnerEndpoint builds the endpoint of the service port ref names for a
// partner link role of portType pt. When no WSDL of the bundle defines
// the service, or its port has no binding, ODE still deployed (its engine
// routes by service name and portType): so does orchd, with a default
// SOAP 1.1 endpoint for pt's operations (in the style their messages
// imply). A provided one
// is served at /processes/<service>; an invoked one has no address, so
// invoking it fails naming the partner link unless a process deployed
// here provides that service port.
func (w *wsdlSet) partnerEndpoint(ref serviceRef, pt *portType) (*exchange.Endpoint, error) {
	ep, err := w.endpoint(ref.service, ref.port, ref.pos)
	if err == nil || pt == nil || !(errors.Is(err, errNoService) || errors.Is(err, errNoBinding)) {
		return ep, err
	}
	port := ref.port
	if i := strings.IndexByte(port, ':'); i >= 0 {
		port = port[i+1:]
	}
	ep = defaultEndpoint(ref.service, port, pt)
	if sp := w.servicePort(ref.service, port); sp != nil {
		ep.Address = sp.address
	}
	return ep, nil
}

// defaultEndpoint is a document/literal SOAP 1.1 endpoint with no address
// for portType pt's operations.
func defaultEndpoint(service qname, port string, pt *portType) *exchange.Endpoint {
	ep := &exchange.Endpoint{Service: service, Port: port, Version: exchange.SOAP11}
	names := make([]string, 0, len(pt.ops))
	for n := range pt.ops {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		op := *pt.ops[n]
		implyStyle(&op)
		ep.Operations = append(ep.Operations, &op)
	}
	return ep
}

// servicePort finds a port of a service in w or w.extra.
func (w *wsdlSet) servicePort(service qname, port string) *servicePort {
	for s := w; s != nil; s = s.extra {
		if sp := s.services[service][port]; sp != nil {
			return sp
		}
	}
	return nil
}

// noService is the error for a service that no WSDL of the bundle defines.
func noService(at bpel.Pos, service qname) error {
	return fmt.Errorf("%s: service %s is %w", at, service, errNoService)
}
