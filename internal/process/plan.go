package process

import (
	"fmt"
	"math/bits"
	"sort"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/wsdl"
)

// qname is a qualified XML name.
type qname = exchange.QName

// Plan is a compiled process: the immutable plan shared by all its
// instances (flyweight) and by every engine that deploys it. Compile
// builds it once; nothing changes it after that. What changes while a
// version serves (its number, statistics, metrics, partner bindings,
// retirement) lives in the Process that wraps it.
type Plan struct {
	// Name is the process QName.
	Name qname
	// Bundle is the bundle folder name; File the BPEL file in it.
	Bundle, File string
	// InMemory is deploy.xml's <in-memory>.
	InMemory bool
	// Endpoints are the ports the process provides.
	Endpoints []*exchange.Endpoint
	// Warnings are what the compiler noticed without refusing the
	// process ("file:line: <element>: ..."); Engine.Deploy logs them.
	Warnings []string

	vars []*variable // by slot - 1
	// slots is the variable tree of a new instance (newSlots), which
	// newInstance copies; nil for a Process the compiler did not build.
	slots *etree.Element
	// maxSteps is deploy.xml's orchd:maxSteps (0: the engine's budget).
	maxSteps int
	// extensions are the registered extension namespaces the process
	// uses (extension.go); Engine.Deploy checks the engine has them.
	extensions []string
	// comp is set when the process uses compensation or termination
	// handlers (compensate.go).
	comp     *compSupport
	inits    []*variable // variables with an inline initializer, in order
	root     activity
	handlers *faultHandlers
	plinks   map[string]*partnerLink
	// plist holds every partner link in declaration order (checkpoints
	// name assigned endpoints by their index).
	plist []*partnerLink
	// acts numbers every activity, for frames in checkpoints.
	acts []activity
	// starts maps operations to the activity (receive or pick) that
	// creates an instance for them.
	starts map[string]activity
	// routes maps operations taken by activities of running instances to
	// the correlation sets that find the instance, one shape per distinct
	// combination of sets an activity correlates on.
	routes     map[string][]*routeShape
	corrSets   map[string]*corrSet
	cleanup    []deploy.CleanupRule
	idempotent map[string]bool
	// replyTimeouts are deploy.xml's per-operation reply timeouts.
	replyTimeouts map[replyOp]time.Duration
	// callTimeouts are deploy.xml's partner call bounds, by
	// "partnerLink/operation" ("partnerLink/" for every operation).
	callTimeouts map[string]time.Duration
	// fingerprint identifies the process definition a checkpoint was
	// taken with (a hash of the BPEL file).
	fingerprint string
	// events are the event categories deploy.xml enables (instevents.go).
	events events.Category
	// actParent, indexed like acts, is the outline: each activity's
	// parent (-1 for the root).
	actParent []int32
}

// variable is a declared variable, resolved to a slot of the instance tree.
type variable struct {
	name string
	slot int // 1-based position of the variable's element in the tree
	msg  *exchange.MessageDesc
	elem qname
	typ  qname
	// simple is the typed value ("number", "string", "boolean") of a
	// simple-typed variable used as a value, or "" (see typedValue).
	simple string
	init   *copyOp
	pos    bpel.Pos
}

// path is the absolute XPath, over the instance tree, of the variable or
// one of its parts.
func (v *variable) path(part string) (string, error) {
	base := "/" + v.slotName()
	if part == "" {
		if v.msg == nil && !v.elem.IsZero() {
			return base + "/*", nil
		}
		return base, nil
	}
	i := v.partIndex(part)
	if i < 0 {
		return "", fmt.Errorf("variable %s has no part %q", v.name, part)
	}
	if v.msg.Parts[i].Element.IsZero() {
		return base + "/" + part, nil
	}
	return base + "/" + part + "/*", nil
}

// slotName is the tag of the variable's slot element: unique, so a name
// test finds it without positional predicates.
func (v *variable) slotName() string { return fmt.Sprintf("v%d", v.slot) }

func (v *variable) partIndex(part string) int {
	if v.msg == nil {
		return -1
	}
	for i, p := range v.msg.Parts {
		if p.Name == part {
			return i
		}
	}
	return -1
}

// newSlots builds the variable tree of a new instance: a root element
// holding every variable's empty slot, in slot order. The slot of an
// element variable and the wrapper of an element part have room for the
// one element they will hold (copyTree keeps it).
func newSlots(vars []*variable) *etree.Element {
	root := etree.NewElement("")
	for _, v := range vars {
		s := v.newSlot()
		switch {
		case v.msg != nil:
			for i, p := range v.msg.Parts {
				if !p.Element.IsZero() {
					s.Child[i].(*etree.Element).Child = make([]etree.Token, 0, 1)
				}
			}
		case !v.elem.IsZero():
			s.Child = make([]etree.Token, 0, 1)
		}
		root.AddChild(s)
	}
	return root
}

// newSlot builds the empty slot element of the variable for a new instance.
func (v *variable) newSlot() *etree.Element {
	s := etree.NewElement(v.slotName())
	if v.msg != nil {
		for _, p := range v.msg.Parts {
			s.CreateElement(p.Name)
		}
	}
	return s
}

type partnerLink struct {
	name      string
	myRole    *wsdl.PortType
	partnerPT *wsdl.PortType
	provided  *exchange.Endpoint // where myRole is served
	// partnerEP describes the partner's port from deploy.xml <invoke>;
	// the binding the engine attached to it is in Process.partners.
	partnerEP *exchange.Endpoint
	// partnerDesc is the partner role's binding: partnerEP, or for a
	// partner link deploy.xml does not bind, a default one with no
	// address (invoking it needs an assigned endpoint reference).
	partnerDesc *exchange.Endpoint
	// idx is the partner link's place in Process.plist.
	idx int
	pos bpel.Pos
}

type faultHandlers struct {
	catches  []*catch
	catchAll activity
}

type catch struct {
	faultName qname
	v         *variable // faultVariable, or nil
	act       activity
}

// PartnerEndpoints returns the partner ports the process invokes, as
// deploy.xml binds them.
func (p *Plan) PartnerEndpoints() []*exchange.Endpoint {
	var out []*exchange.Endpoint
	for _, pl := range p.plinks {
		if pl.partnerEP != nil {
			out = append(out, pl.partnerEP)
		}
	}
	return out
}

// replyOp names a provided operation: its endpoint and name.
type replyOp struct {
	ep *exchange.Endpoint
	op string
}

// activity is a compiled activity: a node of the plan. What it does when
// it runs is stepActivity's (dispatch.go), not the node's.
type activity interface {
	where() bpel.Pos
	setID(int)
	id() int
}

// Fingerprint identifies the process definition (a hash of its BPEL
// file): two deploys of the same file have the same fingerprint.
func (p *Plan) Fingerprint() string { return p.fingerprint }

// addRoute adds sh to op's shapes unless an equal one is there, and
// returns the one op's messages are routed by.
func (p *Plan) addRoute(op string, sh *routeShape) *routeShape {
	for _, o := range p.routes[op] {
		if sameSets(o.uses, sh.uses) {
			return o
		}
	}
	var must, opt uint32
	joins := 0
	for i, u := range sh.uses {
		if u.initiate == "join" && joins < maxJoinRoutes {
			opt |= 1 << i
			joins++
		} else {
			must |= 1 << i
		}
	}
	// Every subset of opt, added to must, largest first.
	for sub := opt; ; sub = (sub - 1) & opt {
		sh.masks = append(sh.masks, must|sub)
		if sub == 0 {
			break
		}
	}
	sort.SliceStable(sh.masks, func(i, j int) bool { return bits.OnesCount32(sh.masks[i]) > bits.OnesCount32(sh.masks[j]) })
	p.routes[op] = append(p.routes[op], sh)
	return sh
}

// callTimeout is the bound deploy.xml puts on calls of operation op of
// partner link pl (the operation's own, else the link's), or zero.
func (p *Plan) callTimeout(pl, op string) time.Duration {
	if d, ok := p.callTimeouts[pl+"/"+op]; ok {
		return d
	}
	return p.callTimeouts[pl+"/"]
}

// VersionID names a process version across orchd nodes: the process
// QName and the fingerprint of its BPEL file, "{ns}local#fingerprint"
// (version numbers count the deploys of one node, and differ between
// nodes).
func (p *Plan) VersionID() string { return p.Name.String() + "#" + p.fingerprint }

// cleans reports whether deploy.xml's <cleanup> drops category when an
// instance ends (successfully or not).
func (p *Plan) cleans(success bool, category string) bool {
	for _, r := range p.cleanup {
		if r.On == "always" || (r.On == "success") == success {
			if r.Categories["all"] || r.Categories[category] {
				return true
			}
		}
	}
	return false
}

// String describes the process for logs: {ns}name (bundle/file).
func (p *Plan) String() string {
	return fmt.Sprintf("%s (%s/%s)", p.Name, p.Bundle, p.File)
}
