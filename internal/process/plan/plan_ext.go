package plan

import (
	"fmt"
	"net/url"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/xsd"
)

// RestActivity is a compiled bpel4restlight GET, POST, PUT or DELETE.
type RestActivity struct {
	Base
	Method                   string
	Uri, Accept, ContentType RestValue
	Request, Response, Code  *expr.Var
	// Static is the activity's child element, serialized at deploy: the
	// body when request gives none.
	Static []byte
}

// ExtActivity runs a registered extension activity.
type ExtActivity struct {
	Base
	Act ExtensionAction
}

// SchemaCheck validates one variable against the schema declarations of
// its element, type, or message parts (WS-BPEL 2.0 section 8.4.3).
type SchemaCheck struct {
	V     *expr.Var
	Set   *xsd.Set
	Elem  *xsd.Element // element variable
	Typ   *xsd.Type    // type variable
	Parts []PartSchema // message variable, one a part
}

type PartSchema struct {
	Elem *xsd.Element
	Typ  *xsd.Type
}

// ReplySchema checks a partner's response message against the schemas
// of the operation's output message (deploy.xml orchd:validateReplies):
// one PartSchema a part, in the order of the message's parts.
type ReplySchema struct {
	Set   *xsd.Set
	Parts []PartSchema // a part without a schema: both nil
	// Explicit is set when deploy.xml insists on the check
	// (<orchd:validateReplies/>): an answer the validator cannot check
	// is refused rather than taken.
	Explicit bool
}

// ValidateAct is <validate variables="a b">.
type ValidateAct struct {
	Base
	Checks []*SchemaCheck
}

// EprSpec is a <from partnerLink endpointReference> or <to partnerLink>.
type EprSpec struct {
	Pl     *PartnerLink
	MyRole bool // from only: endpointReference="myRole"
}

// PartMap is one <fromPart> or <toPart>: a message part and the variable
// it is copied from or to.
type PartMap struct {
	Part string
	V    *expr.Var
}

// RestValue is an attribute's value: a literal, or the text of variable v
// ($bpelvar[name]).
type RestValue struct {
	Lit string
	V   *expr.Var
}

// CheckRESTURL accepts an absolute http or https URL.
func CheckRESTURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", s)
	}
	return nil
}

// ExtWait runs a registered extension activity that waits
// (ExtensionWaiter): Inbound is the message that ends it, on the
// process's extension callback endpoint, correlated on a set of its own
// that the runtime initiates with the key it gives Start.
type ExtWait struct {
	Base
	Act ExtensionWaiter
	Inbound
}
