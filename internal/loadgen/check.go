package loadgen

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
)

// SOAP envelope namespaces.
const (
	soap11NS = "http://schemas.xmlsoap.org/soap/envelope/"
	soap12NS = "http://www.w3.org/2003/05/soap-envelope"
)

// DefaultNamespaces are the prefixes an Expect expression may use without
// declaring them: the SOAP envelopes and the workload's namespaces.
func DefaultNamespaces() map[string]string {
	return map[string]string{
		"soapenv": soap11NS,
		"soap":    soap11NS,
		"soap12":  soap12NS,
		"env":     soap12NS,
		"po":      "urn:example:po",
		"crm":     "urn:example:crm",
		"erp":     "urn:example:erp",
	}
}

// Expect is an XPath 1.0 expression that must be true on every response.
// It is compiled once to check it, and once more per worker, since a
// compiled expression is not safe for concurrent use.
type Expect struct {
	src string
	ns  map[string]string
}

// NewExpect compiles expr with the given prefix bindings (added to
// DefaultNamespaces). The result of the expression is converted to a
// boolean as XPath's boolean() does.
func NewExpect(expr string, ns map[string]string) (*Expect, error) {
	all := DefaultNamespaces()
	for p, u := range ns {
		all[p] = u
	}
	e := &Expect{src: expr, ns: all}
	if _, err := e.compile(); err != nil {
		return nil, err
	}
	return e, nil
}

// String returns the expression's source.
func (e *Expect) String() string { return e.src }

func (e *Expect) compile() (*xpath.Expr, error) {
	x, err := xpath.CompileWithNS(e.src, e.ns)
	if err != nil {
		return nil, fmt.Errorf("--expect %q: %w", e.src, err)
	}
	return x, nil
}

// checker validates responses; one per worker.
type checker struct {
	expect *xpath.Expr
	src    string
}

func newChecker(e *Expect) (*checker, error) {
	c := &checker{}
	if e != nil {
		x, err := e.compile()
		if err != nil {
			return nil, err
		}
		c.expect, c.src = x, e.src
	}
	return c, nil
}

// check returns nil when a response with this status and body is a
// success, else an error whose message classifies the failure.
func (c *checker) check(status int, body []byte) error {
	if f := soapFault(body); f != "" {
		return fmt.Errorf("HTTP %d: SOAP fault: %s", status, f)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("HTTP %d: %s", status, snippet(body))
	}
	if c.expect == nil {
		return nil
	}
	doc, err := xmlquery.Parse(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("--expect: response is not XML: %w", err)
	}
	if !truth(c.expect.Evaluate(xmlquery.CreateXPathNavigator(doc))) {
		return fmt.Errorf("--expect %s: false", c.src)
	}
	return nil
}

// truth converts an XPath result to a boolean as XPath's boolean() does.
func truth(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case float64:
		return v != 0 && v == v // NaN is false
	case string:
		return v != ""
	case *xpath.NodeIterator:
		return v.MoveNext()
	}
	return v != nil
}

// soapFault returns "code: reason" when body is a SOAP 1.1 or 1.2
// envelope whose Body holds a Fault, else "". Bodies that do not mention
// "Fault" at all are answered without parsing.
func soapFault(body []byte) string {
	if !bytes.Contains(body, []byte("Fault")) {
		return ""
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	var (
		path   []xml.Name
		inF    bool
		code   strings.Builder
		reason strings.Builder
		field  string // local name of the fault child being read
	)
	for {
		tok, err := d.Token()
		if err != nil {
			if inF && errors.Is(err, io.EOF) {
				break
			}
			if inF {
				break
			}
			return ""
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path = append(path, t.Name)
			if !inF && len(path) == 3 && t.Name.Local == "Fault" && isEnv(t.Name.Space) &&
				path[0].Local == "Envelope" && isEnv(path[0].Space) &&
				path[1].Local == "Body" && isEnv(path[1].Space) {
				inF = true
			}
			if inF && len(path) >= 4 {
				field = t.Name.Local
			}
		case xml.EndElement:
			if inF && len(path) == 3 {
				return faultText(code.String(), reason.String())
			}
			path = path[:len(path)-1]
		case xml.CharData:
			if !inF {
				continue
			}
			switch field {
			case "faultcode", "Value":
				if code.Len() == 0 {
					code.Write(bytes.TrimSpace(t))
				}
			case "faultstring", "Text":
				if reason.Len() == 0 {
					reason.Write(bytes.TrimSpace(t))
				}
			}
		}
	}
	return faultText(code.String(), reason.String())
}

func isEnv(ns string) bool { return ns == soap11NS || ns == soap12NS }

func faultText(code, reason string) string {
	if code == "" {
		code = "(no code)"
	}
	if reason == "" {
		return code
	}
	return code + ": " + reason
}

// snippet returns the start of a body for an error message.
func snippet(b []byte) string {
	const max = 120
	s := strings.Join(strings.Fields(string(b[:min(len(b), 4*max)])), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
