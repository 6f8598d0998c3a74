package compile

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/xmlparse"
)

// restActivity compiles the bpel4restlight element e found in an
// <extensionActivity>.
func (c *compiler) restActivity(n *ast.RestActivity, b plan.Base) plan.Activity {
	e := &n.Element
	a := &plan.RestActivity{Base: b, Method: e.Tag}
	switch e.Tag {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		c.errorf(e, "unknown bpel4restlight activity <%s> (GET, POST, PUT or DELETE)", e.Tag)
		return &plan.Empty{Base: b}
	}
	uri, attr := restAttr(e, "uri", "requestUri")
	if uri == "" {
		c.errorf(e, "<%s> needs a uri attribute", e.Tag)
	} else {
		if a.Uri = c.restValue(e, attr, uri); a.Uri.V == nil && a.Uri.Lit != "" {
			if err := plan.CheckRESTURL(uri); err != nil {
				c.errorf(e, "uri: %v", err)
			}
		}
	}
	a.Accept = plan.RestValue{Lit: restMedia}
	if s, attr := restAttr(e, "accept"); s != "" {
		a.Accept = c.restValue(e, attr, s)
	}
	a.ContentType = plan.RestValue{Lit: restMedia}
	if s, attr := restAttr(e, "contentType"); s != "" {
		a.ContentType = c.restValue(e, attr, s)
	}
	a.Request = c.restVar(e, "request", "requestPayload")
	a.Response = c.restVar(e, "response", "responsePayload")
	if a.Code = c.restVar(e, "statusCode"); a.Code != nil && !a.Code.OfType() {
		c.errorf(e, "statusCode: variable %s must have a simple type (it receives the status as text)", a.Code.Name)
	}
	if a.Method == http.MethodPost || a.Method == http.MethodPut {
		for _, x := range e.Children() {
			if isBPEL(x) {
				continue // targets, sources, documentation
			}
			cp := x.Src.Copy()
			expr.FixNamespaces(cp, x.Src, nil)
			var buf bytes.Buffer
			ws := xmlparse.WriteSettings()
			cp.WriteTo(&buf, &ws)
			a.Static = buf.Bytes()
			break
		}
	}
	return a
}

// restValue compiles attribute attr's value s: "$bpelvar[name]" names a
// variable of a simple type, anything else is a literal.
func (c *compiler) restValue(e *ast.Element, attr, s string) plan.RestValue {
	if len(s) < len(bpelvarRef) || !strings.EqualFold(s[:len(bpelvarRef)], bpelvarRef) {
		return plan.RestValue{Lit: s}
	}
	name, ok := strings.CutSuffix(s[len(bpelvarRef):], "]")
	if !ok || name == "" || strings.ContainsAny(name, "[]") {
		c.errorf(e, "%s: %q is not a variable reference $bpelvar[name]", attr, s)
		return plan.RestValue{}
	}
	v := c.LookupVar(name)
	switch {
	case v == nil:
		c.errorf(e, "%s: undeclared variable %q", attr, name)
	case !v.OfType():
		c.errorf(e, "%s: $bpelvar[%s] needs a variable of a simple type", attr, name)
		v = nil
	}
	return plan.RestValue{V: v}
}

// restVar resolves the variable the first of attrs that e has names.
func (c *compiler) restVar(e *ast.Element, attrs ...string) *expr.Var {
	name, attr := restAttr(e, attrs...)
	if name == "" {
		return nil
	}
	v := c.LookupVar(name)
	switch {
	case v == nil:
		c.errorf(e, "%s: undeclared variable %q", attr, name)
	case v.Msg != nil:
		c.unsupported(e, fmt.Sprintf("%s=%q: a message variable in a bpel4restlight activity (use an element or type variable)", attr, name))
		return nil
	}
	return v
}

const (
	// restMedia is the default Accept and Content-Type.
	restMedia = "application/xml"
	// bpelvarRef starts a variable reference in an attribute.
	bpelvarRef = "$bpelvar["
)

// restAttr returns the first of the attributes names that e has, and its
// name.
func restAttr(e *ast.Element, names ...string) (value, name string) {
	for _, n := range names {
		if v := e.AttrOr(n, ""); v != "" {
			return v, n
		}
	}
	return "", names[0]
}
