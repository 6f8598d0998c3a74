package process

import (
	"github.com/orchd/orchd/internal/xsd"
)

// restActivity is a compiled bpel4restlight GET, POST, PUT or DELETE.
type restActivity struct {
	base
	method                   string
	uri, accept, contentType restValue
	request, response, code  *variable
	// static is the activity's child element, serialized at deploy: the
	// body when request gives none.
	static []byte
}

// extActivity runs a registered extension activity.
type extActivity struct {
	base
	act ExtensionAction
}

// schemaCheck validates one variable against the schema declarations of
// its element, type, or message parts (WS-BPEL 2.0 section 8.4.3).
type schemaCheck struct {
	v     *variable
	set   *xsd.Set
	elem  *xsd.Element // element variable
	typ   *xsd.Type    // type variable
	parts []partSchema // message variable, one a part
}

type partSchema struct {
	elem *xsd.Element
	typ  *xsd.Type
}

// validateAct is <validate variables="a b">.
type validateAct struct {
	base
	checks []*schemaCheck
}

// eprSpec is a <from partnerLink endpointReference> or <to partnerLink>.
type eprSpec struct {
	pl     *partnerLink
	myRole bool // from only: endpointReference="myRole"
}

// partMap is one <fromPart> or <toPart>: a message part and the variable
// it is copied from or to.
type partMap struct {
	part string
	v    *variable
}

// restValue is an attribute's value: a literal, or the text of variable v
// ($bpelvar[name]).
type restValue struct {
	lit string
	v   *variable
}
