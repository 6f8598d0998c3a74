package process

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/bpel"
	"github.com/orchd/orchd/internal/process/wsdl"
)

// deployDesc is a bundle's deploy.xml: which processes it deploys and how
// their partner links bind.
type deployDesc struct {
	processes []*deployProcess
}

type deployProcess struct {
	name     qname
	pos      bpel.Pos
	inMemory bool
	provides map[string]wsdl.ServiceRef // partnerLink -> service port
	invokes  map[string]wsdl.ServiceRef
	// failure is the <invoke>'s ext:failureHandling, by partner link.
	failure map[string]*failurePolicy
	// idempotent lists partnerLink/operation pairs marked idempotent with
	// orchd:idempotent (see nsOrchdDD).
	idempotent map[string]bool
	// replyTimeout bounds, per partnerLink/operation provided, how long a
	// request waits for a reply a later run gives (orchd:replyTimeout).
	replyTimeout map[string]time.Duration
	// callTimeout bounds, per partnerLink/operation invoked (operation
	// empty: every operation of the link), a partner call
	// (orchd:timeout).
	callTimeout map[string]callTimeout
	// basicAuth are the credentials of a partner link (orchd:basicAuth),
	// the password still to read (readSecrets).
	basicAuth map[string]*basicAuthRef
	cleanup   []cleanupRule
	// properties are the <property> elements, by name, for
	// ode:process-property.
	properties map[qname]*etree.Element
	// events are the event categories <process-events> enables (all
	// when it is absent, as in ODE).
	events events.Category
	// maxSteps is orchd:maxSteps: the step budget of one run of an
	// instance (0: the engine's, Options.MaxSteps).
	maxSteps int
}

// cleanupRule is a deploy.xml <cleanup>: when an instance ends with the
// outcome on ("success", "failure", "always"), drop what categories name.
type cleanupRule struct {
	on         string
	categories map[string]bool // instance, variables, messages, correlations, events, all
}

// nsOrchdDD is orchd's namespace for deploy.xml extensions:
//
//	<invoke partnerLink="crm">
//	  <service .../>
//	  <orchd:idempotent operation="recordPurchaseOrder"/>
//	</invoke>
//
// marks an operation of a partner as safe to repeat: a persistent process
// calls it inline with no checkpoint before it; and
//
//	<provide partnerLink="client">
//	  <service .../>
//	  <orchd:replyTimeout operation="approve">PT10M</orchd:replyTimeout>
//	</provide>
//
// lets a request of a provided operation wait up to that xsd:duration
// for a reply that a later message or timer drives (default 30 s); and
//
//	<invoke partnerLink="crm">
//	  <service .../>
//	  <orchd:timeout operation="getCustomer">PT2S</orchd:timeout>
//	  <orchd:basicAuth user="orchd" passwordFile="crm-password.txt"/>
//	</invoke>
//
// bounds a call of that operation (no operation attribute: of every
// operation of the link; default serve --partner-timeout), and sends HTTP
// basic credentials with every call to the partner, the password read
// from a file of the bundle (trailing newline dropped) or, with
// passwordEnv="NAME", from an environment variable.
const nsOrchdDD = "urn:orchd:deploy"

// nsActivityRecovery is ODE's namespace for failureHandling.
const nsActivityRecovery = "http://ode.apache.org/activityRecovery"

// failurePolicy is ODE's activity failure handling for an invoke.
type failurePolicy struct {
	retryFor       int
	retryDelaySecs int
	faultOnFailure bool
}

// callTimeout is an orchd:timeout: the bound and where it is written.
type callTimeout struct {
	d   time.Duration
	pos bpel.Pos
}

// basicAuthRef is an orchd:basicAuth: the user and where the password is.
type basicAuthRef struct {
	user, file, env string
	pos             bpel.Pos
	// auth is the credentials, once readSecrets has read the password.
	auth *exchange.BasicAuth
}

// parseDeploy reads deploy.xml in Apache ODE's format. Like ODE it ignores
// elements it does not know, accepts the legacy fivesight namespace and a
// prefixed port name.
func parseDeploy(doc *bpel.Document, errs *bpel.Errors) *deployDesc {
	root := doc.Root
	ns := root.NamespaceURI()
	if root.Tag != "deploy" || (ns != bpel.NSDD && ns != bpel.NSDDLegacy) {
		errs.Add(doc.Pos(root), root.Tag, "not an ODE deployment descriptor: want {%s}deploy", bpel.NSDD)
		return nil
	}
	d := &deployDesc{}
	for _, pe := range root.SelectElements("process") {
		sp, local, err := bpel.ResolveQName(pe, pe.SelectAttrValue("name", ""), true)
		if err != nil {
			errs.Add(doc.Pos(pe), "process", "attribute name: %v", err)
			continue
		}
		p := &deployProcess{name: qname{Space: sp, Local: local}, pos: doc.Pos(pe),
			provides: map[string]wsdl.ServiceRef{}, invokes: map[string]wsdl.ServiceRef{},
			failure: map[string]*failurePolicy{}, idempotent: map[string]bool{}, replyTimeout: map[string]time.Duration{},
			callTimeout: map[string]callTimeout{}, basicAuth: map[string]*basicAuthRef{}, events: events.All}
		for _, c := range pe.ChildElements() {
			switch c.Tag {
			case "process-events":
				p.events = parseProcessEvents(doc, c, errs)
			case "in-memory":
				p.inMemory = strings.TrimSpace(c.Text()) == "true"
			case "maxSteps":
				if c.NamespaceURI() == nsOrchdDD {
					n, err := strconv.Atoi(strings.TrimSpace(c.Text()))
					if err != nil || n < 1 {
						errs.Add(doc.Pos(c), "orchd:maxSteps", "want a positive number of activity steps, not %q", strings.TrimSpace(c.Text()))
					}
					p.maxSteps = n
				}
			case "property":
				sp, local, err := bpel.ResolveQName(c, c.SelectAttrValue("name", ""), true)
				if err != nil {
					errs.Add(doc.Pos(c), "property", "attribute name: %v", err)
					continue
				}
				if p.properties == nil {
					p.properties = map[qname]*etree.Element{}
				}
				p.properties[qname{Space: sp, Local: local}] = c
			case "provide", "invoke":
				pl := c.SelectAttrValue("partnerLink", "")
				se := c.SelectElement("service")
				if se == nil {
					errs.Add(doc.Pos(c), c.Tag, "partnerLink %q has no <service>", pl)
					continue
				}
				ref, ok := parseServiceRef(doc, se, errs)
				if !ok {
					continue
				}
				if c.Tag == "provide" {
					p.provides[pl] = ref
					for _, x := range c.ChildElements() {
						if x.Tag == "replyTimeout" && x.NamespaceURI() == nsOrchdDD {
							parseReplyTimeout(doc, x, pl, p.replyTimeout, errs)
						}
					}
					continue
				}
				p.invokes[pl] = ref
				for _, x := range c.ChildElements() {
					switch {
					case x.Tag == "idempotent" && x.NamespaceURI() == nsOrchdDD:
						op := x.SelectAttrValue("operation", "")
						if op == "" {
							errs.Add(doc.Pos(x), "orchd:idempotent", "needs an operation attribute")
						}
						p.idempotent[pl+"/"+op] = true
					case x.Tag == "failureHandling" && x.NamespaceURI() == nsActivityRecovery:
						p.failure[pl] = parseFailure(doc, x, errs)
					case x.Tag == "timeout" && x.NamespaceURI() == nsOrchdDD:
						if d, ok := parseDuration(doc, x, "orchd:timeout", errs); ok {
							p.callTimeout[pl+"/"+x.SelectAttrValue("operation", "")] = callTimeout{d: d, pos: doc.Pos(x)}
						}
					case x.Tag == "basicAuth" && x.NamespaceURI() == nsOrchdDD:
						p.basicAuth[pl] = parseBasicAuth(doc, x, errs)
					}
				}
			case "cleanup":
				r := cleanupRule{on: c.SelectAttrValue("on", "always"), categories: map[string]bool{}}
				switch r.on {
				case "success", "failure", "always":
				default:
					errs.Add(doc.Pos(c), "cleanup", "on must be success, failure or always, not %q", r.on)
				}
				for _, cat := range c.SelectElements("category") {
					r.categories[strings.TrimSpace(cat.Text())] = true
				}
				if len(r.categories) == 0 {
					r.categories["all"] = true
				}
				p.cleanup = append(p.cleanup, r)
			}
		}
		d.processes = append(d.processes, p)
	}
	if len(d.processes) == 0 {
		errs.Add(doc.Pos(root), "deploy", "deploys no <process>")
	}
	return d
}

func parseServiceRef(doc *bpel.Document, se *etree.Element, errs *bpel.Errors) (wsdl.ServiceRef, bool) {
	sp, local, err := bpel.ResolveQName(se, se.SelectAttrValue("name", ""), true)
	if err != nil {
		errs.Add(doc.Pos(se), "service", "attribute name: %v", err)
		return wsdl.ServiceRef{}, false
	}
	return wsdl.ServiceRef{Service: qname{Space: sp, Local: local}, Port: se.SelectAttrValue("port", ""), Pos: doc.Pos(se)}, true
}

// parseFailure reads an ext:failureHandling element (on an invoke in
// deploy.xml or in the BPEL).
func parseFailure(doc *bpel.Document, x *etree.Element, errs *bpel.Errors) *failurePolicy {
	fp := &failurePolicy{}
	for _, c := range x.ChildElements() {
		v := strings.TrimSpace(c.Text())
		var err error
		switch c.Tag {
		case "retryFor":
			fp.retryFor, err = strconv.Atoi(v)
		case "retryDelay":
			fp.retryDelaySecs, err = strconv.Atoi(v)
		case "faultOnFailure":
			fp.faultOnFailure = v == "true"
		}
		if err != nil || fp.retryFor < 0 || fp.retryDelaySecs < 0 {
			errs.Add(doc.Pos(c), c.Tag, "want a non-negative integer, not %q", v)
		}
	}
	return fp
}

// parseReplyTimeout reads an orchd:replyTimeout of partner link pl.
func parseReplyTimeout(doc *bpel.Document, x *etree.Element, pl string, into map[string]time.Duration, errs *bpel.Errors) {
	op := x.SelectAttrValue("operation", "")
	if op == "" {
		errs.Add(doc.Pos(x), "orchd:replyTimeout", "needs an operation attribute")
		return
	}
	if d, ok := parseDuration(doc, x, "orchd:replyTimeout", errs); ok {
		into[pl+"/"+op] = d
	}
}

// parseDuration reads the positive xsd:duration x holds.
func parseDuration(doc *bpel.Document, x *etree.Element, what string, errs *bpel.Errors) (time.Duration, bool) {
	v := strings.TrimSpace(x.Text())
	var zero time.Time
	end, err := addDuration(zero, v)
	if d := end.Sub(zero); err != nil || d <= 0 {
		errs.Add(doc.Pos(x), what, "want a positive xsd:duration such as PT5M, not %q", v)
		return 0, false
	}
	return end.Sub(zero), true
}

// parseBasicAuth reads an orchd:basicAuth: a user and exactly one of
// passwordFile and passwordEnv.
func parseBasicAuth(doc *bpel.Document, x *etree.Element, errs *bpel.Errors) *basicAuthRef {
	r := &basicAuthRef{user: x.SelectAttrValue("user", ""), file: x.SelectAttrValue("passwordFile", ""),
		env: x.SelectAttrValue("passwordEnv", ""), pos: doc.Pos(x)}
	if r.user == "" || strings.ContainsRune(r.user, ':') {
		errs.Add(r.pos, "orchd:basicAuth", "needs a user attribute without ':'")
	}
	if (r.file == "") == (r.env == "") {
		errs.Add(r.pos, "orchd:basicAuth", "needs one of passwordFile (relative to the bundle) and passwordEnv")
	}
	return r
}

// readSecrets reads the passwords the basicAuth settings name: files
// relative to the bundle folder dir (which they may not leave),
// environment variables. The errors name the setting, never a password.
func (d *deployDesc) readSecrets(dir string, errs *bpel.Errors) {
	for _, p := range d.processes {
		for _, r := range p.basicAuth {
			var pw string
			switch {
			case r.file != "":
				if !filepath.IsLocal(filepath.FromSlash(r.file)) {
					errs.Add(r.pos, "orchd:basicAuth", "passwordFile %q must be a path inside the bundle", r.file)
					continue
				}
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.file)))
				if err != nil {
					errs.Add(r.pos, "orchd:basicAuth", "passwordFile: %v", err)
					continue
				}
				pw = strings.TrimRight(string(b), "\r\n")
			case r.env != "":
				v, ok := os.LookupEnv(r.env)
				if !ok {
					errs.Add(r.pos, "orchd:basicAuth", "passwordEnv: environment variable %s is not set", r.env)
					continue
				}
				pw = v
			default:
				continue
			}
			r.auth = &exchange.BasicAuth{User: r.user, Password: exchange.Secret(pw)}
		}
	}
}

// parseProcessEvents reads ODE's <process-events generate="all|none">
// with <enable-event> children naming categories (instanceLifecycle,
// activityLifecycle, dataHandling, scopeHandling, correlation, and
// orchd's partnerInteraction). Without generate and enable-event, like
// ODE, nothing is enabled. <scope-events> (per scope) is accepted and
// ignored: a process's choice applies to all its scopes.
func parseProcessEvents(doc *bpel.Document, x *etree.Element, errs *bpel.Errors) events.Category {
	var c events.Category
	switch g := x.SelectAttrValue("generate", ""); g {
	case "all":
		c = events.All
	case "none", "":
	default:
		errs.Add(doc.Pos(x), "process-events", "generate must be all or none, not %q", g)
	}
	for _, e := range x.ChildElements() {
		if e.Tag != "enable-event" {
			continue
		}
		cat, err := events.ParseCategory(strings.TrimSpace(e.Text()))
		if err != nil {
			errs.Add(doc.Pos(e), "enable-event", "%v", err)
			continue
		}
		c |= cat
	}
	return c
}
