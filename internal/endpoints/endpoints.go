// Package endpoints reads an operator's partner endpoint overrides: a file
// that maps a partner service port, or a portType, to the address orchd
// calls it at instead of the WSDL's soap:address.
//
// One rule a line; '#' starts a comment, blank lines are ignored:
//
//	{http://ns}ServiceName PortName http://127.0.0.1:9999/path
//	{http://ns}ServiceName *        http://127.0.0.1:9999/any-port
//	portType {http://ns}PortTypeName http://127.0.0.1:9998/
//
// A service and port rule wins over a service rule with port '*', which
// wins over a portType rule; among rules of the same kind the first one in
// the file wins. Addresses must be absolute http or https URLs.
package endpoints

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/orchd/orchd/internal/redact"
	"io"
	"os"
	"strings"

	"github.com/orchd/orchd/internal/exchange"
)

// AnyPort is the port of a rule that matches every port of its service.
const AnyPort = "*"

// Rule is one override.
type Rule struct {
	// Service and Port select a partner port (Port may be AnyPort); they
	// are zero for a portType rule.
	Service exchange.QName
	Port    string
	// PortType selects every partner port whose operations belong to it;
	// zero for a service rule.
	PortType exchange.QName
	// Address is where matching partners are called.
	Address string
	// Line is the rule's line in its file (1-based), 0 if built in code.
	Line int
}

// Table is a set of overrides. The zero value overrides nothing. A Table is
// not modified after Parse returns, so it is safe for concurrent use.
type Table struct {
	rules []Rule
}

// New returns a table holding rules (checked like parsed lines).
func New(rules ...Rule) (*Table, error) {
	t := &Table{}
	for _, r := range rules {
		if err := check(r); err != nil {
			return nil, err
		}
		t.rules = append(t.rules, r)
	}
	return t, nil
}

// Load reads the override file at path.
func Load(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("endpoint overrides: %w", err)
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse reads overrides from r; name is the file name errors are reported
// under ("name:line: ..."). Every bad line is reported, joined.
func Parse(name string, r io.Reader) (*Table, error) {
	t := &Table{}
	var errs []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		rule, err := parseLine(fields)
		if err == nil {
			err = check(rule)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, err))
			continue
		}
		rule.Line = line
		t.rules = append(t.rules, rule)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s:%d: %w", name, line+1, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

func parseLine(fields []string) (Rule, error) {
	if fields[0] == "portType" {
		if len(fields) != 3 {
			return Rule{}, fmt.Errorf("want 'portType {ns}Name address', got %d fields", len(fields))
		}
		pt, err := parseQName(fields[1])
		if err != nil {
			return Rule{}, fmt.Errorf("portType: %w", err)
		}
		return Rule{PortType: pt, Address: fields[2]}, nil
	}
	if len(fields) != 3 {
		return Rule{}, fmt.Errorf("want '{ns}Service Port address' or 'portType {ns}Name address', got %d fields", len(fields))
	}
	svc, err := parseQName(fields[0])
	if err != nil {
		return Rule{}, fmt.Errorf("service: %w", err)
	}
	return Rule{Service: svc, Port: fields[1], Address: fields[2]}, nil
}

// parseQName reads Clark notation, {ns}local; the namespace may be empty
// ("local" or "{}local").
func parseQName(s string) (exchange.QName, error) {
	var q exchange.QName
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return q, fmt.Errorf("%q: missing '}'", s)
		}
		q.Space, s = s[1:end], s[end+1:]
	}
	if s == "" || strings.ContainsAny(s, "{}") {
		return q, fmt.Errorf("%q: want {namespace}localName", s)
	}
	q.Local = s
	return q, nil
}

// check validates a rule's shape and address.
func check(r Rule) error {
	switch {
	case r.PortType.IsZero() == r.Service.IsZero():
		return errors.New("a rule names either a service and port or a portType")
	case !r.Service.IsZero() && r.Port == "":
		return errors.New("a service rule needs a port (or *)")
	}
	u, err := redact.Parse(r.Address)
	if err != nil {
		return fmt.Errorf("address: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("address %q: want an absolute http or https URL", redact.Address(r.Address))
	}
	return nil
}

// Rules returns a copy of the table's rules, in file order.
func (t *Table) Rules() []Rule {
	if t == nil {
		return nil
	}
	return append([]Rule(nil), t.rules...)
}

// Lookup returns the address overriding ep, if a rule matches it.
func (t *Table) Lookup(ep *exchange.Endpoint) (string, bool) {
	if t == nil || ep == nil {
		return "", false
	}
	port := ep.Port
	if i := strings.IndexByte(port, ':'); i >= 0 {
		port = port[i+1:] // deploy.xml may carry a prefixed port name
	}
	for _, want := range []string{port, AnyPort} {
		for _, r := range t.rules {
			if !r.Service.IsZero() && r.Service == ep.Service && r.Port == want {
				return r.Address, true
			}
		}
	}
	for _, r := range t.rules {
		if r.PortType.IsZero() {
			continue
		}
		for _, op := range ep.Operations {
			if op.PortType == r.PortType {
				return r.Address, true
			}
		}
	}
	return "", false
}

// Apply returns ep with its address overridden when a rule matches (a
// copy: endpoints are immutable), or ep itself.
func (t *Table) Apply(ep *exchange.Endpoint) *exchange.Endpoint {
	addr, ok := t.Lookup(ep)
	if !ok {
		return ep
	}
	cp := *ep
	cp.Address = addr
	return &cp
}

// Partners wraps a partner binder (such as soap.Client.Partner) so that
// endpoints the table matches are bound at their overriding address.
func (t *Table) Partners(bind func(*exchange.Endpoint) exchange.Partner) func(*exchange.Endpoint) exchange.Partner {
	return func(ep *exchange.Endpoint) exchange.Partner { return bind(t.Apply(ep)) }
}
