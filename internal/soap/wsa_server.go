package soap

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// The front door's side of WS-Addressing (WS-Addressing 1.0 SOAP Binding
// section 5): a request-response request whose wsa:ReplyTo is not
// anonymous is answered with HTTP 202 before it is dispatched, and its
// reply (or fault) is sent, once Dispatch returns, as a POST to the
// ReplyTo address (faults to the FaultTo address when there is one),
// with wsa:To, wsa:Action, wsa:MessageID, wsa:RelatesTo and the EPR's
// reference parameters as header blocks. That address is chosen by the
// client: the POST goes under the partner address policy (Client's
// policed transport, narrowed to the process's deploy.xml rules), as a
// call to an address a process assigned at run time does. A request
// whose ReplyTo is anonymous is answered on the HTTP response, its reply
// carrying wsa:Action and wsa:RelatesTo. Requests without WS-Addressing
// headers are served as before.

// ErrOnlyAnonymous is a request whose ReplyTo or FaultTo is not
// anonymous on a server that sends no callbacks (no
// ServerOptions.Callbacks).
var ErrOnlyAnonymous = errors.New("wsa:OnlyAnonymousAddressSupported")

// wsaFaultActionURI is the action of SOAP faults that are not declared
// WSDL faults (WS-Addressing 1.0 SOAP Binding section 6).
const wsaFaultActionURI = NSWSA + "/soap/fault"

// callback is a reply or fault to send to a non-anonymous EPR.
type callback struct {
	to     *EPR
	action string
	body   []byte
}

// resolveWSA finds the operation a request is for by its wsa:Action,
// when neither its body nor its SOAPAction told (resolve failed): the
// one operation whose input action or SOAPAction it is, or nil.
func (rt *route) resolveWSA(headers []*etree.Element, soapAction string) *exchange.Operation {
	action := ""
	for _, h := range headers {
		if h.Tag == "Action" && isWSA(h.NamespaceURI()) {
			action = strings.TrimSpace(h.Text())
			break
		}
	}
	if action == "" || action == soapAction {
		return nil
	}
	var match *exchange.Operation
	for _, op := range rt.ep.Operations {
		if op.InputAction == action || op.Action == action {
			if match != nil {
				return nil
			}
			match = op
		}
	}
	return match
}

// addressed takes the request's WS-Addressing properties wa: with a
// non-anonymous ReplyTo on a request-response operation it answers 202
// now and returns a context that outlives the client's connection (the
// exchange runs on after the client hung up).
func (rp *reply) addressed(ctx context.Context, wa *Addressing) (context.Context, error) {
	rp.wsa = wa
	if rp.op.OneWay() {
		return ctx, nil
	}
	replyAsync, faultAsync := !wa.ReplyTo.anonymous(), !wa.FaultTo.anonymous()
	if !replyAsync && !faultAsync {
		return ctx, nil
	}
	if rp.s.callbacks == nil {
		return ctx, exchange.ClientError("%w: this server answers only on the HTTP response (anonymous wsa:ReplyTo and wsa:FaultTo)", ErrOnlyAnonymous)
	}
	for _, e := range []*EPR{wa.ReplyTo, wa.FaultTo} {
		if e.anonymous() || e.none() {
			continue
		}
		if err := callbackAddress(e.Address); err != nil {
			return ctx, err
		}
	}
	if !replyAsync {
		return ctx, nil
	}
	rp.async = true
	rp.accepted()
	return context.WithoutCancel(ctx), nil
}

// callbackAddress checks that addr is an absolute http or https URL.
func callbackAddress(addr string) error {
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exchange.ClientError("%w: wsa:ReplyTo or wsa:FaultTo address %q is not an absolute http or https URL", ErrMessage, Redact(addr))
	}
	return nil
}

// accepted answers the HTTP request with 202 and no body.
func (rp *reply) accepted() {
	rp.w.Header().Set("Content-Length", "0")
	rp.w.WriteHeader(http.StatusAccepted)
	if f, ok := rp.w.(http.Flusher); ok {
		f.Flush()
	}
}

// faultActionOf is the wsa:Action of the reply to a request of op: its
// output's, a declared fault's, or the SOAP fault action.
func faultActionOf(op *exchange.Operation, f *exchange.Fault) string {
	if f == nil {
		return op.OutputAction
	}
	if a := op.FaultActions[f.Name.Local]; a != "" && f.Name.Space == op.PortType.Space {
		return a
	}
	return wsaFaultActionURI
}

// wsaFaultAction is the action of an undeclared fault in wa's namespace.
func wsaFaultAction(wa *Addressing) string {
	if wa != nil && wa.NS == NSWSA2004 {
		return NSWSA2004 + "/fault"
	}
	return wsaFaultActionURI
}

// replyAddressing returns where the reply (fault: a fault) of the
// request goes, nil for the HTTP response, its action and its header
// blocks. rp.wsa may be nil: then nothing.
func (rp *reply) replyAddressing(fault bool, action string) (*EPR, string, []*etree.Element) {
	wa := rp.wsa
	if wa == nil {
		return nil, "", nil
	}
	if action == wsaFaultActionURI {
		action = wsaFaultAction(wa)
	}
	dest := wa.ReplyTo
	if fault && wa.FaultTo != nil {
		dest = wa.FaultTo
	}
	if dest.anonymous() {
		anon := &EPR{Address: wsaAnonymous}
		if wa.NS == NSWSA2004 {
			anon.Address = wsaAnonymous2004
		}
		if dest != nil {
			anon.Params = dest.Params
		}
		return nil, action, addressingHeaders(wa.NS, anon, action, wa.MessageID)
	}
	return dest, action, addressingHeaders(wa.NS, dest, action, wa.MessageID)
}

// deferred keeps the encoded reply or fault in buf for a callback to to,
// when to is set, answering the HTTP request with 202 if not done yet; a
// reply for the HTTP response of an exchange answered with 202 already
// is dropped (logged). It reports whether buf must not be written to
// the HTTP response.
func (rp *reply) deferred(to *EPR, action string, buf *bytes.Buffer) bool {
	if to == nil {
		if rp.async {
			rp.s.log.Warn("fault for an anonymous wsa:FaultTo of a request answered with 202 already; dropped",
				logKeyProcess, rp.rt.process, logKeyOp, rp.op.Name)
			return true
		}
		return false
	}
	if !to.none() {
		rp.cb = &callback{to: to, action: action, body: bytes.Clone(buf.Bytes())}
	}
	if !rp.async {
		rp.async = true
		rp.accepted()
	}
	rp.s.metrics.replied(rp.received)
	return true
}

// faultDeferred is deferred for a fault finish reports (a failure, no
// reply): it reports whether the fault went to a callback (or was
// dropped) instead of the HTTP response.
func (rp *reply) faultDeferred(code FaultCode, reason string) bool {
	if rp.wsa == nil || rp.op.OneWay() {
		return false
	}
	to, action, hs := rp.replyAddressing(true, wsaFaultActionURI)
	if to == nil && !rp.async {
		return false
	}
	buf := rp.s.bufs.get()
	defer rp.s.bufs.put(buf)
	_ = encodeFault(buf, rp.ver, hs, code, reason, nil)
	return rp.deferred(to, action, buf)
}

// setSOAPHeaders sets the content type (and SOAPAction) of a SOAP
// request of version v with action.
func setSOAPHeaders(req *http.Request, v exchange.SOAPVersion, action string) {
	if v == exchange.SOAP12 {
		ct := contentType12
		if action != "" {
			ct += `; action="` + action + `"`
		}
		req.Header.Set("Content-Type", ct)
		return
	}
	req.Header.Set("Content-Type", contentType11)
	req.Header.Set("SOAPAction", `"`+action+`"`)
}
