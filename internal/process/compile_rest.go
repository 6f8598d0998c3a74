package process

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/beevik/etree"
)

// restActivity compiles the bpel4restlight element e found in an
// <extensionActivity>.
func (c *compiler) restActivity(e *etree.Element, b base) activity {
	a := &restActivity{base: b, method: e.Tag}
	switch e.Tag {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		c.errorf(e, "unknown bpel4restlight activity <%s> (GET, POST, PUT or DELETE)", e.Tag)
		return &empty{base: b}
	}
	uri, attr := restAttr(e, "uri", "requestUri")
	if uri == "" {
		c.errorf(e, "<%s> needs a uri attribute", e.Tag)
	} else {
		if a.uri = c.restValue(e, attr, uri); a.uri.v == nil && a.uri.lit != "" {
			if err := checkRESTURL(uri); err != nil {
				c.errorf(e, "uri: %v", err)
			}
		}
	}
	a.accept = restValue{lit: restMedia}
	if s, attr := restAttr(e, "accept"); s != "" {
		a.accept = c.restValue(e, attr, s)
	}
	a.contentType = restValue{lit: restMedia}
	if s, attr := restAttr(e, "contentType"); s != "" {
		a.contentType = c.restValue(e, attr, s)
	}
	a.request = c.restVar(e, "request", "requestPayload")
	a.response = c.restVar(e, "response", "responsePayload")
	if a.code = c.restVar(e, "statusCode"); a.code != nil && !typeVar(a.code) {
		c.errorf(e, "statusCode: variable %s must have a simple type (it receives the status as text)", a.code.name)
	}
	if a.method == http.MethodPost || a.method == http.MethodPut {
		for _, x := range e.ChildElements() {
			if isBPEL(x) {
				continue // targets, sources, documentation
			}
			cp := x.Copy()
			fixNamespaces(cp, x, nil)
			var buf bytes.Buffer
			cp.WriteTo(&buf, &etree.WriteSettings{})
			a.static = buf.Bytes()
			break
		}
	}
	return a
}

// restValue compiles attribute attr's value s: "$bpelvar[name]" names a
// variable of a simple type, anything else is a literal.
func (c *compiler) restValue(e *etree.Element, attr, s string) restValue {
	if len(s) < len(bpelvarRef) || !strings.EqualFold(s[:len(bpelvarRef)], bpelvarRef) {
		return restValue{lit: s}
	}
	name, ok := strings.CutSuffix(s[len(bpelvarRef):], "]")
	if !ok || name == "" || strings.ContainsAny(name, "[]") {
		c.errorf(e, "%s: %q is not a variable reference $bpelvar[name]", attr, s)
		return restValue{}
	}
	v := c.lookupVar(name)
	switch {
	case v == nil:
		c.errorf(e, "%s: undeclared variable %q", attr, name)
	case !typeVar(v):
		c.errorf(e, "%s: $bpelvar[%s] needs a variable of a simple type", attr, name)
		v = nil
	}
	return restValue{v: v}
}

// restVar resolves the variable the first of attrs that e has names.
func (c *compiler) restVar(e *etree.Element, attrs ...string) *variable {
	name, attr := restAttr(e, attrs...)
	if name == "" {
		return nil
	}
	v := c.lookupVar(name)
	switch {
	case v == nil:
		c.errorf(e, "%s: undeclared variable %q", attr, name)
	case v.msg != nil:
		c.unsupported(e, fmt.Sprintf("%s=%q: a message variable in a bpel4restlight activity (use an element or type variable)", attr, name))
		return nil
	}
	return v
}
