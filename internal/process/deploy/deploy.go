package deploy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchd/orchd/internal/bundlefs"
	"github.com/orchd/orchd/internal/xsd"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/events"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/partnerallow"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/wssec"
)

// Descriptor is a bundle's deploy.xml: which processes it deploys and how
// their partner links bind.
type Descriptor struct {
	Processes []*Process
}

// Process is one <process> of deploy.xml: how one process of the bundle
// is deployed.
type Process struct {
	Name     qname
	Pos      xmldoc.Pos
	InMemory bool
	Provides map[string]wsdl.ServiceRef // partnerLink -> service port
	Invokes  map[string]wsdl.ServiceRef
	// Failure is the <invoke>'s ext:failureHandling, by partner link.
	Failure map[string]*FailurePolicy
	// Idempotent lists partnerLink/operation pairs marked idempotent with
	// orchd:idempotent (see nsOrchdDD).
	Idempotent map[string]bool
	// ReplyTimeout bounds, per partnerLink/operation provided, how long a
	// request waits for a reply a later run gives (orchd:replyTimeout).
	ReplyTimeout map[string]time.Duration
	// CallTimeout bounds, per partnerLink/operation invoked (operation
	// empty: every operation of the link), a partner call
	// (orchd:timeout).
	CallTimeout map[string]callTimeout
	// BasicAuth are the credentials of a partner link (orchd:basicAuth),
	// the password still to read (readSecrets).
	BasicAuth map[string]*basicAuthRef
	// ProvideTokens and InvokeTokens are the orchd:usernameToken
	// settings (wssec.go) of <provide> and <invoke>, by partner link.
	ProvideTokens map[string]*ProvideToken
	InvokeTokens  map[string]*InvokeToken
	Cleanup       []CleanupRule
	// Properties are the <property> elements, by name, for
	// ode:process-property.
	Properties map[qname]*etree.Element
	// Events are the event categories <process-events> enables (all
	// when it is absent, as in ODE).
	Events events.Category
	// MaxSteps is orchd:maxSteps: the step budget of one run of an
	// instance (0: the engine's, Options.MaxSteps).
	MaxSteps int
	// Retention is orchd:retention (retention.go).
	Retention Retention
	// MaxVariableBytes and MaxRunBytes are orchd:maxVariableBytes and
	// orchd:maxRunBytes (0: the engine's bounds; membudget.go).
	MaxVariableBytes, MaxRunBytes int64
	// FaultUncaught is orchd:uncaughtFailure "fault": a partner failure
	// no handler of a persistent process catches ends the instance with
	// the fault instead of suspending it for an operator (the default,
	// "suspend").
	FaultUncaught bool
	// ValidateReplies holds what a partner link's <invoke> says with
	// orchd:validateReplies: true (empty, yes) checks its answers against
	// the schemas of the operation's output message and refuses the
	// bundle when there are none; false (no) takes them unchecked. A link
	// it does not name follows NoValidateReplies (validatereplies.go).
	ValidateReplies map[string]bool
	// NoValidateReplies is <orchd:validateReplies>no</...> as a child of
	// <process>: the answers of its partners are not checked unless their
	// <invoke> says yes. By default (false) every answer whose message
	// the bundle's schemas declare is checked.
	NoValidateReplies bool
	// Addressing lists the partner links whose calls carry
	// WS-Addressing headers although their WSDL binding does not say
	// so (orchd:addressing in their <invoke>).
	Addressing map[string]bool
	// Waive lists the static analysis rules (SA ids) whose findings in
	// this process deploy as warnings instead of refusing the bundle
	// (orchd:waive).
	Waive map[string]bool
	// Compat is orchd:compat: the engine whose leniency the process
	// relies on ("ode"; "strict" or absent: none), over the server's
	// --compat.
	Compat string
	// PartnerAllow are the orchd:partnerAllow rules: the addresses
	// chosen at run time (copied endpoint references) the process may
	// call, within the operator's --partner-allow policy; nil without
	// rules (the operator's policy alone).
	PartnerAllow *partnerallow.List
}

// CleanupRule is a deploy.xml <cleanup>: when an instance ends with the
// outcome on ("success", "failure", "always"), drop what categories name.
type CleanupRule struct {
	On         string
	Categories map[string]bool // instance, variables, messages, correlations, events, all
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
// passwordEnv="NAME", from an environment variable; and
//
//	<invoke partnerLink="crm">
//	  <service .../>
//	  <orchd:validateReplies>no</orchd:validateReplies>
//	</invoke>
//
// takes the partner's answers without checking them against the schemas
// of the operation's output message, which orchd otherwise does before
// the process takes an answer (a violation is bpel:invalidVariables at
// the invoke); <orchd:validateReplies/> (or yes) insists on the check,
// refusing a bundle whose schemas do not declare the message; as a child
// of <process>, <orchd:validateReplies>no</orchd:validateReplies> turns
// the check off for every partner whose <invoke> does not say yes; and
//
//	<invoke partnerLink="crm">
//	  <service .../>
//	  <orchd:addressing/>
//	</invoke>
//
// sends wsa:To, wsa:Action and wsa:MessageID with every call to the
// partner, as a binding with wsaw:UsingAddressing does; and, as a child of
// <process>,
//
//	<orchd:uncaughtFailure>fault</orchd:uncaughtFailure>
//
// makes a partner failure that no handler of a persistent process
// catches end the instance with ext:activityFailure, as in-memory
// processes do, instead of suspending the instance at the invoke for an
// operator ("suspend", the default); and
//
//	<orchd:waive rules="SA00011 SA00061"/>
//
// deploys the process despite findings of those static analysis rules,
// each a warning (bundles written for engines that did not check them);
// and
//
//	<orchd:compat>ode</orchd:compat>
//
// deploys and runs the process as Apache ODE 1.3 did: the static analysis
// rules ODE did not enforce are warnings (docs/static-analysis.md).
const nsOrchdDD = "urn:orchd:deploy"

// qname is a qualified XML name.
type qname = exchange.QName

// NsActivityRecovery is ODE's namespace for failureHandling.
const NsActivityRecovery = xmldoc.NSODEActivityRecovery

// FailurePolicy is ODE's activity failure handling for an invoke.
type FailurePolicy struct {
	RetryFor       int
	RetryDelaySecs int
	FaultOnFailure bool
}

// callTimeout is an orchd:timeout: the bound and where it is written.
type callTimeout struct {
	D   time.Duration
	Pos xmldoc.Pos
}

// basicAuthRef is an orchd:basicAuth: the user and where the password is.
type basicAuthRef struct {
	secretRef
	// Auth is the credentials, once readSecrets has read the password.
	Auth *exchange.BasicAuth
}

// secretRef is a user and where its password is: a file of the bundle
// (passwordFile) or an environment variable (passwordEnv).
type secretRef struct {
	user, file, env string
	pos             xmldoc.Pos
}

// Parse reads deploy.xml in Apache ODE's format. An element or attribute
// of ODE's deploy namespace or orchd's that neither knows is an error
// (validate); elements of other namespaces are extensions, ignored. Like
// ODE it accepts the legacy fivesight namespace and a prefixed port name.
func Parse(doc *xmldoc.Document, errs *xmldoc.Errors) *Descriptor {
	root := doc.Root
	ns := root.NamespaceURI()
	if root.Tag != "deploy" || (ns != xmldoc.NSDD && ns != xmldoc.NSDDLegacy) {
		errs.Add(doc.Pos(root), root.Tag, "not an ODE deployment descriptor: want {%s}deploy", xmldoc.NSDD)
		return nil
	}
	validate(doc, root, errs)
	d := &Descriptor{}
	for _, pe := range root.SelectElements("process") {
		sp, local, err := xmldoc.ResolveQName(pe, pe.SelectAttrValue("name", ""), true)
		if err != nil {
			errs.Add(doc.Pos(pe), "process", "attribute name: %v", err)
			continue
		}
		p := &Process{Name: qname{Space: sp, Local: local}, Pos: doc.Pos(pe),
			Provides: map[string]wsdl.ServiceRef{}, Invokes: map[string]wsdl.ServiceRef{},
			Failure: map[string]*FailurePolicy{}, Idempotent: map[string]bool{}, ReplyTimeout: map[string]time.Duration{},
			CallTimeout: map[string]callTimeout{}, BasicAuth: map[string]*basicAuthRef{}, Events: events.All,
			ProvideTokens: map[string]*ProvideToken{}, InvokeTokens: map[string]*InvokeToken{}}
		for _, c := range pe.ChildElements() {
			switch c.Tag {
			case "process-events":
				p.Events = parseProcessEvents(doc, c, errs)
			case "in-memory":
				p.InMemory = strings.TrimSpace(c.Text()) == "true"
			case "maxSteps":
				if c.NamespaceURI() == nsOrchdDD {
					n, err := strconv.Atoi(strings.TrimSpace(c.Text()))
					if err != nil || n < 1 {
						errs.Add(doc.Pos(c), "orchd:maxSteps", "want a positive number of activity steps, not %q", strings.TrimSpace(c.Text()))
					}
					p.MaxSteps = n
				}
			case "maxVariableBytes", "maxRunBytes":
				if c.NamespaceURI() == nsOrchdDD {
					parseByteBound(doc, c, errs, p)
				}
			case "uncaughtFailure":
				if c.NamespaceURI() == nsOrchdDD {
					p.FaultUncaught = parseUncaughtFailure(doc, c, errs)
				}
			case "validateReplies":
				if c.NamespaceURI() == nsOrchdDD {
					p.NoValidateReplies = !parseValidateReplies(doc, c, errs)
				}
			case "waive":
				if c.NamespaceURI() == nsOrchdDD {
					p.Waive = parseWaive(doc, c, errs, p.Waive)
				}
			case "compat":
				if c.NamespaceURI() == nsOrchdDD {
					p.Compat = strings.TrimSpace(c.Text())
					if p.Compat != "ode" && p.Compat != "strict" {
						errs.Add(doc.Pos(c), "orchd:compat", "unknown compatibility mode %q: want ode (Apache ODE 1.3's static analysis) or strict", p.Compat)
					}
				}
			case "partnerAllow":
				if c.NamespaceURI() == nsOrchdDD {
					parsePartnerAllow(doc, c, p, errs)
				}
			case "retention":
				if c.NamespaceURI() == nsOrchdDD {
					p.Retention = parseRetention(doc, c, errs)
				}
			case "property":
				sp, local, err := xmldoc.ResolveQName(c, c.SelectAttrValue("name", ""), true)
				if err != nil {
					errs.Add(doc.Pos(c), "property", "attribute name: %v", err)
					continue
				}
				if p.Properties == nil {
					p.Properties = map[qname]*etree.Element{}
				}
				p.Properties[qname{Space: sp, Local: local}] = c
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
					p.Provides[pl] = ref
					for _, x := range c.ChildElements() {
						switch {
						case x.Tag == "replyTimeout" && x.NamespaceURI() == nsOrchdDD:
							parseReplyTimeout(doc, x, pl, p.ReplyTimeout, errs)
						case x.Tag == "usernameToken" && x.NamespaceURI() == nsOrchdDD:
							p.ProvideTokens[pl] = parseProvideToken(doc, x, errs)
						}
					}
					continue
				}
				p.Invokes[pl] = ref
				for _, x := range c.ChildElements() {
					switch {
					case x.Tag == "idempotent" && x.NamespaceURI() == nsOrchdDD:
						op := x.SelectAttrValue("operation", "")
						if op == "" {
							errs.Add(doc.Pos(x), "orchd:idempotent", "needs an operation attribute")
						}
						p.Idempotent[pl+"/"+op] = true
					case x.Tag == "failureHandling" && x.NamespaceURI() == NsActivityRecovery:
						p.Failure[pl] = ParseFailure(doc, x, errs)
					case x.Tag == "timeout" && x.NamespaceURI() == nsOrchdDD:
						if d, ok := parseDuration(doc, x, "orchd:timeout", errs); ok {
							p.CallTimeout[pl+"/"+x.SelectAttrValue("operation", "")] = callTimeout{D: d, Pos: doc.Pos(x)}
						}
					case x.Tag == "basicAuth" && x.NamespaceURI() == nsOrchdDD:
						p.BasicAuth[pl] = &basicAuthRef{secretRef: parseSecretRef(doc, x, "orchd:basicAuth", errs)}
					case x.Tag == "validateReplies" && x.NamespaceURI() == nsOrchdDD:
						if p.ValidateReplies == nil {
							p.ValidateReplies = map[string]bool{}
						}
						p.ValidateReplies[pl] = parseValidateReplies(doc, x, errs)
					case x.Tag == "usernameToken" && x.NamespaceURI() == nsOrchdDD:
						p.InvokeTokens[pl] = parseInvokeToken(doc, x, errs)
					case x.Tag == "addressing" && x.NamespaceURI() == nsOrchdDD:
						if p.Addressing == nil {
							p.Addressing = map[string]bool{}
						}
						p.Addressing[pl] = true
					}
				}
			case "cleanup":
				r := CleanupRule{On: c.SelectAttrValue("on", "always"), Categories: map[string]bool{}}
				switch r.On {
				case "success", "failure", "always":
				default:
					errs.Add(doc.Pos(c), "cleanup", "on must be success, failure or always, not %q", r.On)
				}
				for _, cat := range c.SelectElements("category") {
					r.Categories[strings.TrimSpace(cat.Text())] = true
				}
				if len(r.Categories) == 0 {
					r.Categories["all"] = true
				}
				p.Cleanup = append(p.Cleanup, r)
			}
		}
		d.Processes = append(d.Processes, p)
	}
	if len(d.Processes) == 0 {
		errs.Add(doc.Pos(root), "deploy", "deploys no <process>")
	}
	return d
}

func parseServiceRef(doc *xmldoc.Document, se *etree.Element, errs *xmldoc.Errors) (wsdl.ServiceRef, bool) {
	sp, local, err := xmldoc.ResolveQName(se, se.SelectAttrValue("name", ""), true)
	if err != nil {
		errs.Add(doc.Pos(se), "service", "attribute name: %v", err)
		return wsdl.ServiceRef{}, false
	}
	return wsdl.ServiceRef{Service: qname{Space: sp, Local: local}, Port: se.SelectAttrValue("port", ""), Pos: doc.Pos(se)}, true
}

// ParseFailure reads an ext:failureHandling element (on an invoke in
// deploy.xml or in the BPEL).
func ParseFailure(doc *xmldoc.Document, x *etree.Element, errs *xmldoc.Errors) *FailurePolicy {
	fp := &FailurePolicy{}
	for _, c := range x.ChildElements() {
		v := strings.TrimSpace(c.Text())
		var err error
		switch c.Tag {
		case "retryFor":
			fp.RetryFor, err = strconv.Atoi(v)
		case "retryDelay":
			fp.RetryDelaySecs, err = strconv.Atoi(v)
		case "faultOnFailure":
			fp.FaultOnFailure = v == "true"
		}
		if err != nil || fp.RetryFor < 0 || fp.RetryDelaySecs < 0 {
			errs.Add(doc.Pos(c), c.Tag, "want a non-negative integer, not %q", v)
		}
	}
	return fp
}

// parseWaive reads an orchd:waive: rules="SA00011 SA00061", the static
// analysis rules whose findings the process deploys with, as warnings
// (for bundles written for an engine that did not check them, as ODE's
// own tests).
func parseWaive(doc *xmldoc.Document, c *etree.Element, errs *xmldoc.Errors, into map[string]bool) map[string]bool {
	rules := strings.Fields(c.SelectAttrValue("rules", ""))
	if len(rules) == 0 {
		errs.Add(doc.Pos(c), "orchd:waive", "needs a rules attribute listing static analysis rule ids (SA00011 ...)")
	}
	for _, r := range rules {
		if len(r) != 7 || !strings.HasPrefix(r, "SA") || strings.Trim(r[2:], "0123456789") != "" {
			errs.Add(doc.Pos(c), "orchd:waive", "%q is not a static analysis rule id (SA followed by five digits)", r)
			continue
		}
		if into == nil {
			into = map[string]bool{}
		}
		into[r] = true
	}
	return into
}

// parseUncaughtFailure reads an orchd:uncaughtFailure: "suspend" or
// "fault" (true).
func parseUncaughtFailure(doc *xmldoc.Document, c *etree.Element, errs *xmldoc.Errors) bool {
	switch v := strings.TrimSpace(c.Text()); v {
	case "suspend":
		return false
	case "fault":
		return true
	default:
		errs.Add(doc.Pos(c), "orchd:uncaughtFailure", "want suspend or fault, not %q", v)
		return false
	}
}

// parsePartnerAllow reads an orchd:partnerAllow into p.PartnerAllow:
//
//	<orchd:partnerAllow host="10.1.0.0/16" port="8080-8090"/>
//	<orchd:partnerAllow host="*.partners.example.com" port="443"/>
//
// host a host name (*.domain for its subdomains), an IP address or a CIDR
// prefix; port a port or LOW-HIGH, absent for any.
func parsePartnerAllow(doc *xmldoc.Document, x *etree.Element, p *Process, errs *xmldoc.Errors) {
	host := strings.TrimSpace(x.SelectAttrValue("host", ""))
	if host == "" {
		errs.Add(doc.Pos(x), "orchd:partnerAllow", "needs a host attribute: a host name, an IP address or a CIDR prefix")
		return
	}
	r, err := partnerallow.ParseHostPort(host, strings.TrimSpace(x.SelectAttrValue("port", "")))
	if err != nil {
		errs.Add(doc.Pos(x), "orchd:partnerAllow", "%v", err)
		return
	}
	if p.PartnerAllow == nil {
		p.PartnerAllow = &partnerallow.List{}
	}
	p.PartnerAllow.Rules = append(p.PartnerAllow.Rules, r)
}

// parseReplyTimeout reads an orchd:replyTimeout of partner link pl.
func parseReplyTimeout(doc *xmldoc.Document, x *etree.Element, pl string, into map[string]time.Duration, errs *xmldoc.Errors) {
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
func parseDuration(doc *xmldoc.Document, x *etree.Element, what string, errs *xmldoc.Errors) (time.Duration, bool) {
	return durationAt(doc.Pos(x), x.Text(), what, errs)
}

// durationAt reads the positive xsd:duration v, written at pos. It is
// measured from 1970 by xsd's saturating deadline conversion: one past
// the longest time.Duration (about 292 years) is that longest one, not a
// wrapped short or negative one.
func durationAt(pos xmldoc.Pos, v, what string, errs *xmldoc.Errors) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	d, err := xsd.ParseDuration(v)
	end := xsd.DeadlineAfter(0, d)
	if err != nil || end <= 0 {
		errs.Add(pos, what, "want a positive xsd:duration such as PT5M, not %q", v)
		return 0, false
	}
	return time.Duration(end), true
}

// parseSecretRef reads the user and exactly one of passwordFile and
// passwordEnv of setting what (orchd:basicAuth, orchd:usernameToken).
func parseSecretRef(doc *xmldoc.Document, x *etree.Element, what string, errs *xmldoc.Errors) secretRef {
	r := secretRef{user: x.SelectAttrValue("user", ""), file: x.SelectAttrValue("passwordFile", ""),
		env: x.SelectAttrValue("passwordEnv", ""), pos: doc.Pos(x)}
	if r.user == "" || strings.ContainsRune(r.user, ':') {
		errs.Add(r.pos, what, "needs a user attribute without ':'")
	}
	if (r.file == "") == (r.env == "") {
		errs.Add(r.pos, what, "needs one of passwordFile (relative to the bundle) and passwordEnv")
	}
	return r
}

// read reads the password: a file relative to the bundle folder dir
// (which it may not leave, trailing newline dropped), or an environment
// variable. The errors name the setting, never a password.
func (r *secretRef) read(dir string, lim bundlefs.Limits, what string, errs *xmldoc.Errors) (string, bool) {
	switch {
	case r.file != "":
		if !filepath.IsLocal(filepath.FromSlash(r.file)) {
			errs.Add(r.pos, what, "passwordFile %q must be a path inside the bundle", r.file)
			return "", false
		}
		b, err := bundlefs.ReadFile(dir, r.file, lim)
		if err != nil {
			errs.Add(r.pos, what, "passwordFile: %v", err)
			return "", false
		}
		return strings.TrimRight(string(b), "\r\n"), true
	case r.env != "":
		v, ok := os.LookupEnv(r.env)
		if !ok {
			errs.Add(r.pos, what, "passwordEnv: environment variable %s is not set", r.env)
			return "", false
		}
		return v, true
	}
	return "", false
}

// ReadSecrets reads the passwords the basicAuth and usernameToken
// settings name, and the credentials files of the usernameTokens of
// provided endpoints (secretRef.read, ProvideToken); the
// Authenticators of those endpoints remember nonces in replay, or each
// in its own memory when replay is nil, and run their password checks
// in checks' slots (nil: unbounded).
func (d *Descriptor) ReadSecrets(dir string, lim bundlefs.Limits, replay wssec.ReplayStore, checks *wssec.Gate, errs *xmldoc.Errors) {
	for _, p := range d.Processes {
		for _, r := range p.BasicAuth {
			if pw, ok := r.read(dir, lim, "orchd:basicAuth", errs); ok {
				r.Auth = &exchange.BasicAuth{User: r.user, Password: exchange.Secret(pw)}
			}
		}
		p.readTokens(dir, lim, replay, checks, errs)
	}
}

// parseProcessEvents reads ODE's <process-events generate="all|none">
// with <enable-event> children naming categories (instanceLifecycle,
// activityLifecycle, dataHandling, scopeHandling, correlation, and
// orchd's partnerInteraction). Without generate and enable-event, like
// ODE, nothing is enabled. <scope-events> (per scope) is accepted and
// ignored: a process's choice applies to all its scopes.
func parseProcessEvents(doc *xmldoc.Document, x *etree.Element, errs *xmldoc.Errors) events.Category {
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
