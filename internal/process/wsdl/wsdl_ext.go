package wsdl

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xsd"
)

// Why a service port named in deploy.xml has no usable WSDL description;
// partnerEndpoint falls back to a default endpoint for both.
var (
	errNoService = errors.New("not defined in any WSDL of the bundle")
	errNoBinding = errors.New("has no binding")
)

// LoadUnimported loads, into w.extra, every .wsdl file of the bundle
// folder tree that no BPEL import reached. ODE registered every WSDL of a
// bundle, so deploy.xml may name a service defined in a WSDL that no
// process imports. Those files are only consulted for services, and their
// problems are not the bundle's: they are ignored.
func (w *Set) LoadUnimported() {
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
	w.extra = NewSet(w.dir, &xmldoc.Errors{})
	w.extra.Shared = w.Shared
	w.extra.Limits = w.Limits
	for _, n := range names {
		w.extra.LoadWSDL(n, xmldoc.Pos{File: n})
	}
	w.extra.ResolveMessages()
}

// PartnerEndpoint builds the endpoint of the service port ref names for a
// partner link role of portType pt. When no WSDL of the bundle defines
// the service, or its port has no binding, ODE still deployed (its engine
// routes by service name and portType): so does orchd, with a default
// SOAP 1.1 endpoint for pt's operations (in the style their messages
// imply). A provided one
// is served at /processes/<service>; an invoked one has no address, so
// invoking it fails naming the partner link unless a process deployed
// here provides that service port.
func (w *Set) PartnerEndpoint(ref ServiceRef, pt *PortType) (*exchange.Endpoint, error) {
	ep, err := w.endpoint(ref.Service, ref.Port, ref.Pos)
	if err == nil || pt == nil || !(errors.Is(err, errNoService) || errors.Is(err, errNoBinding)) {
		return ep, err
	}
	port := ref.Port
	if i := strings.IndexByte(port, ':'); i >= 0 {
		port = port[i+1:]
	}
	ep = DefaultEndpoint(ref.Service, port, pt)
	if sp := w.servicePort(ref.Service, port); sp != nil {
		ep.Address = sp.address
	}
	return ep, nil
}

// DefaultEndpoint is a document/literal SOAP 1.1 endpoint with no address
// for portType pt's operations.
func DefaultEndpoint(service qname, port string, pt *PortType) *exchange.Endpoint {
	ep := &exchange.Endpoint{Service: service, Port: port, Version: exchange.SOAP11}
	names := make([]string, 0, len(pt.Ops))
	for n := range pt.Ops {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		op := *pt.Ops[n]
		implyStyle(&op)
		ep.Operations = append(ep.Operations, &op)
	}
	return ep
}

// servicePort finds a port of a service in w or w.extra.
func (w *Set) servicePort(service qname, port string) *servicePort {
	for s := w; s != nil; s = s.extra {
		if sp := s.services[service][port]; sp != nil {
			return sp
		}
	}
	return nil
}

// noService is the error for a service that no WSDL of the bundle defines.
func noService(at xmldoc.Pos, service qname) error {
	return fmt.Errorf("%s: service %s is %w", at, service, errNoService)
}

// Schemas loads the bundle's schemas the first time a process validates:
// every .xsd and .wsdl of the bundle folder tree and whatever the loaded
// documents and the processes' XSD imports name.
func (w *Set) Schemas() *xsd.Set {
	if w.xsd != nil {
		return w.xsd
	}
	seen := map[string]bool{}
	var files []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			files = append(files, n)
		}
	}
	_ = filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(d.Name(), ".xsd") || strings.HasSuffix(d.Name(), ".wsdl")) {
			return nil
		}
		if rel, err := filepath.Rel(w.dir, p); err == nil {
			add(filepath.ToSlash(rel))
		}
		return nil
	})
	names := make([]string, 0, len(w.docs))
	for n := range w.docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range append(names, w.XsdImports...) {
		add(n)
	}
	w.xsd = xsd.Load(w.ReadBundleFile, files)
	return w.xsd
}

// ServiceRef names a WSDL service and port (deploy.xml's <service>), where
// a reference to it was written.
type ServiceRef struct {
	Service qname
	Port    string
	Pos     xmldoc.Pos
}
