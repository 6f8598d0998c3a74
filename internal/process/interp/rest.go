package interp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/restcall"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xmlparse"
)

// Apache ODE's REST extension activities (bpel4restlight): inside an
// <extensionActivity>, one of
//
//	<rest:GET|POST|PUT|DELETE uri="..." accept="..." contentType="..."
//	    request="var" response="var" statusCode="var">payload?</rest:...>
//
// makes one HTTP call. uri (or requestUri), accept and contentType are
// literals or "$bpelvar[name]", the text of a variable of a simple type.
// POST and PUT send the request variable (an element variable: its
// element; a simple-typed one: its text; another type variable: its
// content inside an element named after the variable), or when it is not
// given or not initialized, the activity's child element, or no body.
// Accept and Content-Type default to application/xml. Whatever the status,
// a non-empty response body (trimmed) is stored in the response variable
// (parsed as XML, except for a simple-typed variable, which takes the
// text) and the status code in the statusCode variable; a call that gets
// no response (connection refused, timeout) or a body that does not fit
// the variable throws ODE's {http://www.apache.org/ode/type/extension}
// bpel4RestExtensions fault, as ODE's Bpel4RestLightOperation did.

// simpleVar reports a variable of one of XML Schema's simple types: it
// holds text. (A type variable of another type may hold elements.)
func simpleVar(v *expr.Var) bool {
	return v.OfType() && v.Typ.Space == xmldoc.NSXSD && v.Typ.Local != "anyType" && v.Typ.Local != "anySimpleType"
}

// stepRestActivity makes the call. A persistent instance is checkpointed first unless
// the method is GET (safe to repeat after a crash); a call made while
// other threads can go on leaves on its own goroutine, as an invoke's.
func stepRestActivity(a *plan.RestActivity, in *Instance, f *frame) (plan.Activity, bool, error) {
	if f.k == kAnswer {
		f.k = 0
		if ans := in.cur.answer; ans != nil {
			in.cur.answer = nil
			return answeredRestActivity(a, in, ans.rest, ans.err)
		}
		// Resumed after a restart with the call in flight: below, as a
		// recovered call.
	} else if f.k != 0 {
		if done, err, ok := in.recoveryStep(f, a.Pos); ok {
			return nil, done, err
		}
	}
	recovered, err := in.beforeCall(f, func() bool { return a.Method != http.MethodGet })
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint before %s at %s: %w", a.Method, a.Pos, err)
	}
	if recovered {
		return nil, false, failedRestActivity(a, in, errMayHaveRun)
	}
	req, err := buildRestActivity(a, in)
	if err != nil {
		return nil, false, err
	}
	client := in.host.Rest()
	if in.othersBusy() {
		return nil, false, in.callAsync(f, func(ctx context.Context) *callAnswer {
			res, err := client.Do(ctx, req)
			return &callAnswer{rest: res, err: err}
		})
	}
	res, err := client.Do(in.ctx, req)
	return answeredRestActivity(a, in, res, err)
}

// buildRestActivity reads what the call needs from the instance's variables.
func buildRestActivity(a *plan.RestActivity, in *Instance) (*restcall.Request, error) {
	r := &restcall.Request{Method: a.Method, Parent: in.traceParent()}
	var err error
	if r.URL, err = getRestValue(a.Uri, in, a); err != nil {
		return nil, err
	}
	if a.Uri.V != nil {
		r.Assigned, r.Only = true, in.proc.PartnerAllow
		if err := plan.CheckRESTURL(r.URL); err != nil {
			return nil, faultRestActivity(a, fmt.Errorf("uri from variable %s: %w", a.Uri.V.Name, err))
		}
	}
	if r.Accept, err = getRestValue(a.Accept, in, a); err != nil {
		return nil, err
	}
	if a.Method != http.MethodPost && a.Method != http.MethodPut {
		return r, nil
	}
	if r.ContentType, err = getRestValue(a.ContentType, in, a); err != nil {
		return nil, err
	}
	if a.Request != nil {
		r.Body, r.HasBody = payload(in, a.Request)
	}
	if !r.HasBody && a.Static != nil {
		r.Body, r.HasBody = a.Static, true
	}
	return r, nil
}

// getRestValue is the value: the literal, or the variable's text.
func getRestValue(v plan.RestValue, in *Instance, a *plan.RestActivity) (string, error) {
	if v.V == nil {
		return v.Lit, nil
	}
	s := in.Slot(v.V)
	if len(s.Child) == 0 {
		return "", in.faultf(a.Pos, "uninitializedVariable", "variable %s (in $bpelvar[%s]) was never assigned", v.V.Name, v.V.Name)
	}
	return strings.TrimSpace(s.Text()), nil
}

// payload serializes variable v as a request body; ok is false when v
// holds nothing.
func payload(in *Instance, v *expr.Var) (body []byte, ok bool) {
	s := in.Slot(v)
	var buf bytes.Buffer
	ws := new(etree.WriteSettings)
	*ws = xmlparse.WriteSettings()
	switch {
	case !v.Elem.IsZero():
		el := expr.FirstElement(s)
		if el == nil {
			return nil, false
		}
		cp := el.Copy()
		expr.FixNamespaces(cp, el, nil)
		cp.WriteTo(&buf, ws)
	case simpleVar(v) || expr.FirstElement(s) == nil:
		if len(s.Child) == 0 {
			return nil, false
		}
		buf.WriteString(s.Text())
	default:
		// Content of a complex type: inside an element named after the
		// variable, as its value has no element name of its own.
		w := s.Copy()
		w.Space, w.Tag = "", v.Name
		expr.FixNamespaces(w, s, nil)
		w.WriteTo(&buf, ws)
	}
	return buf.Bytes(), true
}

// answeredRestActivity stores the response, or turns the failure into a fault.
func answeredRestActivity(a *plan.RestActivity, in *Instance, res *restcall.Response, err error) (plan.Activity, bool, error) {
	in.stepsLeft = in.stepBudget // the run waited for the partner
	in.mem.StartRun(in.proc.MaxVariableBytes, in.proc.MaxRunBytes, in.host.MemoryBounds())
	if err != nil {
		return nil, false, failedRestActivity(a, in, err)
	}
	in.host.Logger().Debug("REST call", "method", a.Method, "status", res.Status, "at", a.Pos.String())
	if body := bytes.TrimSpace(res.Body); len(body) > 0 && a.Response != nil {
		if err := storeBody(in, a.Response, body); err != nil {
			return nil, false, faultRestActivity(a, err)
		}
	}
	if a.Code != nil {
		s := in.Slot(a.Code)
		expr.ClearChildren(s)
		s.SetText(strconv.Itoa(res.Status))
		in.touch(a.Code)
	}
	return nil, true, nil
}

// storeBody puts a response body into variable v: the text into a
// simple-typed variable, else the parsed XML (an element variable's
// element, another type variable's content).
func storeBody(in *Instance, v *expr.Var, body []byte) error {
	s := in.Slot(v)
	if simpleVar(v) || (v.OfType() && body[0] != '<') {
		expr.ClearChildren(s)
		s.SetText(string(body))
		in.touch(v)
		return nil
	}
	// The linear parser with the limits of inbound messages (etree's
	// own reader is quadratic in the attributes of an element).
	doc, err := xmlparse.Parse(body, xmlparse.Options{})
	if err != nil {
		return fmt.Errorf("response for variable %s is not XML: %w", v.Name, err)
	}
	root := doc.Root()
	if root == nil {
		return fmt.Errorf("response for variable %s is not XML: no element", v.Name)
	}
	if v.OfType() {
		expr.ReplaceContent(s, root)
	} else {
		doc.RemoveChild(root)
		expr.ClearChildren(s)
		s.AddChild(root)
	}
	in.touch(v)
	return nil
}

// failedRestActivity handles a call that got no response: the fault ODE threw, unless
// the instance's own context ended (shutdown, or its client left before
// the reply), which is a failure of the instance, as for an invoke: a
// persistent instance is suspended for an operator.
func failedRestActivity(a *plan.RestActivity, in *Instance, err error) error {
	if in.ctx.Err() == nil && !errors.Is(err, errMayHaveRun) {
		return faultRestActivity(a, err)
	}
	err = fmt.Errorf("%s at %s: %w", a.Method, a.Pos, err)
	if !in.proc.InMemory && in.host.Stored() {
		in.suspendReason = err.Error()
		return errSuspended
	}
	return err
}

// faultRestActivity is the bpel4RestExtensions fault for err.
func faultRestActivity(a *plan.RestActivity, err error) *faultValue {
	return &faultValue{Name: RestFault, Reason: fmt.Sprintf("bpel4restlight %s: %v", a.Method, err), at: a.Pos}
}

// RestFault is the fault a failed REST call throws (ODE's
// Bpel4RestLightExtensionBundle.FAULT_QNAME).
var RestFault = exchange.QName{Space: xmldoc.NSODEFunctions, Local: "bpel4RestExtensions"}
