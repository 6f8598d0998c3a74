package htclient

import (
	_ "embed" // the WSDL
	"encoding/xml"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// WSDLName is the name of the API's WSDL document: GET Path?wsdl, or
// Path?wsdl=WSDLName, serves it.
const WSDLName = "HumanTaskClientAPIAdmin.wsdl"

// wsdlDoc is the API's description, its soap:address location the slot
// addressSlot, which serveWSDL fills with the address the request
// reached.
//
//go:embed HumanTaskClientAPIAdmin.wsdl
var wsdlDoc string

const addressSlot = "{address}"

// wsdlFor is the WSDL with base (scheme://host[:port][/prefix], as
// publicurl computes it) + Path as the service's address.
func wsdlFor(base string) []byte {
	var loc strings.Builder
	_ = xml.EscapeText(&loc, []byte(base+Path))
	return []byte(strings.Replace(wsdlDoc, addressSlot, loc.String(), 1))
}

// serveWSDL answers GET (or HEAD) Path?wsdl and Path?wsdl=WSDLName (the
// query key in any case, as the processes' ?wsdl takes it).
func (h *Handler) serveWSDL(w http.ResponseWriter, r *http.Request) {
	found, name := false, ""
	for k, vs := range r.URL.Query() {
		if strings.EqualFold(k, "wsdl") {
			found = true
			if len(vs) > 0 {
				name = vs[0]
			}
		}
	}
	if !found || r.URL.Path != Path {
		w.Header().Set("Allow", "POST")
		http.Error(w, "GET serves only "+Path+"?wsdl; send SOAP requests with POST", http.StatusMethodNotAllowed)
		return
	}
	if name != "" && name != WSDLName {
		http.Error(w, "no WSDL document "+strconv.Quote(name)+" at "+Path, http.StatusNotFound)
		return
	}
	doc := wsdlFor(h.Public.Base(r))
	hd := w.Header()
	hd.Set("Content-Type", "application/xml; charset=utf-8")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := w.Write(doc); err != nil {
		h.log().Debug("writing the task client WSDL", slog.Any("err", err))
	}
}
