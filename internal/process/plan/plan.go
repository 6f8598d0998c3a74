package plan

import (
	"fmt"
	"math/bits"
	"net/url"
	"sort"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// qname is a qualified XML name.
type qname = exchange.QName

// Plan is a compiled process: the immutable plan shared by all its
// instances (flyweight) and by every engine that deploys it. Compile
// builds it once; nothing changes it after that. What changes while a
// version serves (its number, statistics, metrics, partner bindings,
// retirement) lives in the interp.Version that wraps it.
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

	Vars []*expr.Var // by slot - 1
	// Slots is the variable tree of a new instance (expr.NewSlots), which
	// interp.NewInstance copies; nil for a Plan the compiler did not build.
	Slots *etree.Element
	// MaxSteps is deploy.xml's orchd:maxSteps (0: the engine's budget).
	MaxSteps int
	// MaxVariableBytes and MaxRunBytes are deploy.xml's
	// orchd:maxVariableBytes and orchd:maxRunBytes (0: the engine's).
	MaxVariableBytes, MaxRunBytes int64
	// FaultUncaught is deploy.xml's orchd:uncaughtFailure "fault": a
	// partner failure no handler catches ends a persistent instance with
	// the fault instead of suspending it (interp's failedInvoke).
	FaultUncaught bool
	// UndeclaredFaultsFail is set under compatibility mode ODE: a SOAP
	// fault a partner answers that the operation does not declare is a
	// partner failure (ext:activityFailure), as in Apache ODE, rather
	// than a fault named by its detail's element (docs/bpel.md).
	UndeclaredFaultsFail bool
	// PartnerAllow is deploy.xml's orchd:partnerAllow rules (nil: none),
	// which narrow the partner address policy for the addresses the
	// process assigns at run time.
	PartnerAllow *partnerallow.List
	// Extensions are the registered extension namespaces the process
	// uses (the compiler's extension.go).
	Extensions []string
	// Comp is set when the process uses compensation or termination
	// handlers (compensate.go).
	Comp *CompSupport
	// Inits are the initializers (the <from> of a declaration) of the
	// process's own variables, in declaration order; a scope's are its
	// Scope.Inits.
	Inits    []*CopyOp
	Root     Activity
	Handlers *FaultHandlers
	Plinks   map[string]*PartnerLink
	// Plist holds every partner link in declaration order (checkpoints
	// name assigned endpoints by their index).
	Plist []*PartnerLink
	// Acts numbers every activity, for frames in checkpoints.
	Acts []Activity
	// Starts maps operations to the activity (receive or pick) that
	// creates an instance for them.
	Starts map[string]Activity
	// Routes maps operations taken by activities of running instances to
	// the correlation sets that find the instance, one shape per distinct
	// combination of sets an activity correlates on.
	Routes   map[string][]*RouteShape
	CorrSets map[string]*CorrSet
	Cleanup  []deploy.CleanupRule
	// Retention is deploy.xml's orchd:retention.
	Retention  deploy.Retention
	Idempotent map[string]bool
	// ReplyTimeouts are deploy.xml's per-operation reply timeouts.
	ReplyTimeouts map[ReplyOp]time.Duration
	// CallTimeouts are deploy.xml's partner call bounds, by
	// "partnerLink/operation" ("partnerLink/" for every operation).
	CallTimeouts map[string]time.Duration
	// Fingerprint identifies the process definition a checkpoint was
	// taken with (a hash of the BPEL file).
	Fingerprint string
	// Events are the event categories deploy.xml enables (interp's
	// instevents.go).
	Events events.Category
	// ActParent, indexed like Acts, is the outline: each activity's
	// parent (-1 for the root).
	ActParent []int32
}

type PartnerLink struct {
	Name      string
	MyRole    *wsdl.PortType
	PartnerPT *wsdl.PortType
	Provided  *exchange.Endpoint // where myRole is served
	// PartnerEP describes the partner's port from deploy.xml <invoke>;
	// the binding the engine attached to it is in interp.Version.Partners.
	PartnerEP *exchange.Endpoint
	// PartnerDesc is the partner role's binding: PartnerEP, or for a
	// partner link deploy.xml does not bind, a default one with no
	// address (invoking it needs an assigned endpoint reference).
	PartnerDesc *exchange.Endpoint
	// Idx is the partner link's place in Plan.Plist.
	Idx int
	Pos xmldoc.Pos
}

type FaultHandlers struct {
	Catches  []*Catch
	CatchAll Activity
}

type Catch struct {
	FaultName qname
	V         *expr.Var // faultVariable, or nil
	Act       Activity
}

// PartnerEndpoints returns the partner ports the process invokes, as
// deploy.xml binds them.
func (p *Plan) PartnerEndpoints() []*exchange.Endpoint {
	var out []*exchange.Endpoint
	for _, pl := range p.Plinks {
		if pl.PartnerEP != nil {
			out = append(out, pl.PartnerEP)
		}
	}
	return out
}

// ReplyOp names a provided operation: its endpoint and name.
type ReplyOp struct {
	Endpoint *exchange.Endpoint
	Op       string
}

// Activity is a compiled activity: a node of the plan. What it does when
// it runs is the interpreter's (internal/process/interp, stepActivity in
// dispatch.go), not the node's.
type Activity interface {
	Where() xmldoc.Pos
	SetID(int)
	ID() int
}

// AddRoute adds sh to op's shapes unless an equal one is there, and
// returns the one op's messages are routed by.
func (p *Plan) AddRoute(op string, sh *RouteShape) *RouteShape {
	for _, o := range p.Routes[op] {
		if sameSets(o.Uses, sh.Uses) {
			return o
		}
	}
	var must, opt uint32
	joins := 0
	for i, u := range sh.Uses {
		if u.Initiate == "join" && joins < maxJoinRoutes {
			opt |= 1 << i
			joins++
		} else {
			must |= 1 << i
		}
	}
	// Every subset of opt, added to must, largest first.
	for sub := opt; ; sub = (sub - 1) & opt {
		sh.Masks = append(sh.Masks, must|sub)
		if sub == 0 {
			break
		}
	}
	sort.SliceStable(sh.Masks, func(i, j int) bool { return bits.OnesCount32(sh.Masks[i]) > bits.OnesCount32(sh.Masks[j]) })
	p.Routes[op] = append(p.Routes[op], sh)
	return sh
}

// CallTimeout is the bound deploy.xml puts on calls of operation op of
// partner link pl (the operation's own, else the link's), or zero.
func (p *Plan) CallTimeout(pl, op string) time.Duration {
	if d, ok := p.CallTimeouts[pl+"/"+op]; ok {
		return d
	}
	return p.CallTimeouts[pl+"/"]
}

// VersionID names a process version across orchd nodes: the process
// QName and the fingerprint of its BPEL file, "{ns}local#fingerprint"
// (version numbers count the deploys of one node, and differ between
// nodes).
func (p *Plan) VersionID() string { return p.Name.String() + "#" + p.Fingerprint }

// Cleans reports whether deploy.xml's <cleanup> drops category when an
// instance ends (successfully or not).
func (p *Plan) Cleans(success bool, category string) bool {
	for _, r := range p.Cleanup {
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

// EndpointPath is the URL path a provided port is served at: the path of
// its soap:address, or /processes/<service> when it has none.
func EndpointPath(address, service string) string {
	if u, err := url.Parse(address); err == nil && u.Path != "" && u.Path != "/" {
		return u.Path
	}
	return "/processes/" + service
}
