package soap

import (
	"errors"
	"net/http"
	"slices"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// WS-Security (exchange.Endpoint.Auth and Security): a provided
// endpoint with an Authenticator refuses a request it does not
// authenticate with the wsse:FailedAuthentication fault of the SOAP
// Message Security spec (section 12), which tells the client nothing
// more; the log has the reason and the user, never a password. The
// header block the Authenticator processed counts as understood; any
// other mustUnderstand block, a wsse:Security one included where no
// Authenticator is configured, still gets a MustUnderstand fault.

// nsWSSE is the namespace of wsse:Security and of the fault code.
const nsWSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"

// failedAuthReason is the fault's reason, the spec's.
const failedAuthReason = "The security token could not be authenticated or authorized"

// authBusyReason is the fault's reason when no password check could
// be made at once.
const authBusyReason = "too many authentication checks at once; retry later"

// authenticate runs the endpoint's Authenticator, if it has one, over
// the request's header blocks. It returns the blocks left to check for
// mustUnderstand, or false once it has answered a refused request.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, rt *route, op *exchange.Operation, headers []*etree.Element) ([]*etree.Element, bool) {
	a := rt.ep.Auth
	if a == nil {
		return headers, true
	}
	understood, user, err := a.Authenticate(headers, r.TLS != nil)
	var busy interface{ Unavailable() bool }
	if errors.As(err, &busy) && busy.Unavailable() {
		// Not checked: every password check slot was taken (counted by
		// the authenticator's bound). Not logged one by one: a flood of
		// them is what the bound is for.
		s.log.Debug("request refused: WS-Security checks busy", logKeyPath, rt.ep.Path, "remote", r.RemoteAddr, logKeyErr, err)
		w.Header().Set("Retry-After", "1")
		s.writeFault(w, rt.ep.Version, FaultServer, authBusyReason, nil, http.StatusServiceUnavailable)
		return nil, false
	}
	if err != nil {
		s.log.Warn("request refused: WS-Security", logKeyPath, rt.ep.Path, logKeyOp, op.Name, "user", user, "remote", r.RemoteAddr, logKeyErr, err)
		s.writeFailedAuth(w, rt.ep.Version)
		return nil, false
	}
	if len(understood) == 0 {
		return headers, true
	}
	rest := make([]*etree.Element, 0, len(headers))
	for _, h := range headers {
		if !slices.Contains(understood, h) {
			rest = append(rest, h)
		}
	}
	return rest, true
}

// writeFailedAuth answers wsse:FailedAuthentication: SOAP 1.1's
// faultcode, or SOAP 1.2's Sender with that Subcode (HTTP 400).
func (s *Server) writeFailedAuth(w http.ResponseWriter, v exchange.SOAPVersion) {
	buf := s.bufs.get()
	defer s.bufs.put(buf)
	p := envPrefix(v)
	status := http.StatusInternalServerError
	_ = writeEnvelope(buf, v, nil, func(xw etree.Writer) {
		writeTag(xw, p, "Fault", false)
		if v == exchange.SOAP12 {
			status = http.StatusBadRequest
			xw.WriteString("<" + p + ":Code><" + p + ":Value>" + p + ":Sender</" + p + ":Value><" + p + ":Subcode><" + p +
				`:Value xmlns:wsse="` + nsWSSE + `">wsse:FailedAuthentication</` + p + ":Value></" + p + ":Subcode></" + p + ":Code>")
			xw.WriteString("<" + p + ":Reason><" + p + `:Text xml:lang="en">` + failedAuthReason + "</" + p + ":Text></" + p + ":Reason>")
		} else {
			xw.WriteString(`<faultcode xmlns:wsse="` + nsWSSE + `">wsse:FailedAuthentication</faultcode><faultstring>` + failedAuthReason + "</faultstring>")
		}
		writeTag(xw, p, "Fault", true)
	})
	s.write(w, v, status, buf)
}

// securityHeaders is headers with the partner's WS-Security header
// block added, when it has one.
func securityHeaders(ep *exchange.Endpoint, headers []*etree.Element) ([]*etree.Element, error) {
	if ep.Security == nil {
		return headers, nil
	}
	h, err := ep.Security.SecurityHeader(envNS(ep.Version))
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(headers), h), nil
}
