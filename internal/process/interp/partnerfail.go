package interp

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/replycheck"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/redact"
	"github.com/orchd/orchd/internal/xsd"
)

// One fault model for partner failures, whatever <in-memory> says.
//
// A call that fails (no answer, a transport error, an answer that is no
// response message of the operation) is ext:activityFailure at the
// invoke, with orchd:partnerFailure data, in in-memory and persistent
// processes alike, so the process's own handlers see it first. ODE's
// failureHandling keeps its meaning: retryFor/retryDelay first, then
// faultOnFailure throws the fault whatever would catch it. Only where
// the two modes must differ do they:
//
//   - a persistent instance suspends at the invoke for an operator
//     (orchd ctl retry|fault|cancel) when no handler the author wrote
//     would catch the fault, that is when it would end the instance,
//     unless deploy.xml says <orchd:uncaughtFailure>fault</...>; an
//     in-memory instance has no operator and ends with the fault;
//   - a guarded call that was in flight when orchd stopped (recovery:
//     it may or may not have reached the partner) suspends a persistent
//     instance unless its policy retries it or says faultOnFailure, as
//     before: the author's handler was written for a partner's failure,
//     not for orchd's;
//   - a call failed because the instance's own context ended (shutdown,
//     termination) is no partner failure: a persistent instance is
//     suspended, an in-memory run fails.
//
// A declared fault (a SOAP fault the WSDL names, or an application fault
// by its faultcode) is no failure: it is the partner's answer, thrown as
// that fault in both modes (faultFromPartner).

// failedInvoke applies the invoke's failure policy to a failed call (see
// above): retry later, throw activityFailure, or suspend the instance.
func failedInvoke(a *plan.Invoke, in *Instance, f *frame, err error) (plan.Activity, bool, error) {
	err = fmt.Errorf("invoke %s.%s at %s: %w", a.Pl.Name, a.Op.Name, a.Pos, err)
	fp := a.Policy
	attempts := f.pc - 1
	if attempts < 0 {
		attempts = 0
	}
	if fp != nil && attempts < fp.RetryFor {
		f.pc = attempts + 2
		f.due = xsd.DeadlineAfter(xsd.DeadlineOf(in.host.Now()), xsd.Duration{Seconds: int64(fp.RetryDelaySecs)})
		in.wakeAt(f.due)
		in.host.Logger().Warn("invoke failed; will retry", "err", err, "attempt", attempts+1, "of", fp.RetryFor)
		return nil, false, errBlocked
	}
	persistent := !in.proc.InMemory && in.host.Stored()
	fv := failureInvoke(a, in, err)
	thrown := func(why string) (plan.Activity, bool, error) {
		in.host.Logger().Warn("invoke failed; activityFailure thrown", "err", err, slog.String("because", why))
		return nil, false, fv
	}
	switch {
	case fp != nil && fp.FaultOnFailure:
		return thrown("faultOnFailure")
	case in.ctx.Err() != nil:
		// Not the partner's failure: the instance's run is being stopped.
	case !persistent:
		return thrown("in-memory process")
	case errors.Is(err, errMayHaveRun):
		// Recovery after a crash mid-call: for an operator, as before.
	case in.wouldCatch(fv):
		return thrown("a handler of the process catches it")
	case in.proc.FaultUncaught:
		return thrown("orchd:uncaughtFailure is fault")
	}
	if persistent {
		in.suspendReason = err.Error()
		return nil, false, errSuspended
	}
	return nil, false, err
}

// failureInvoke is the activityFailure fault for a failed call of a's
// partner. Its data, for a catch with faultElement="orchd:partnerFailure"
// (namespace urn:orchd:fault), names the partner link, the operation and
// the address called (credentials redacted), and says what went wrong:
//
//	<orchd:partnerFailure>
//	  <orchd:partnerLink>crm</orchd:partnerLink>
//	  <orchd:operation>getCustomer</orchd:operation>
//	  <orchd:address>http://crm.example/soap</orchd:address>
//	  <orchd:message>invoke crm.getCustomer at po.bpel:40: partner ...: timed out: no answer within 2s</orchd:message>
//	</orchd:partnerFailure>
func failureInvoke(a *plan.Invoke, in *Instance, err error) *faultValue {
	el := etree.NewElement("orchd:partnerFailure")
	el.CreateAttr("xmlns:orchd", nsFault)
	el.CreateElement("orchd:partnerLink").SetText(a.Pl.Name)
	el.CreateElement("orchd:operation").SetText(a.Op.Name)
	el.CreateElement("orchd:address").SetText(in.partnerAddress(a.Pl))
	el.CreateElement("orchd:message").SetText(err.Error())
	return &faultValue{Name: ActivityFailure, elem: el, Reason: err.Error(), at: a.Pos}
}

// partnerAddress is where calls of pl's partner role go, credentials
// removed: what the binding says (exchange.Addressed, which sees the
// operator's address overrides), else the address assigned at run time
// or given by deploy.xml; "" when there is none.
func (in *Instance) partnerAddress(pl *plan.PartnerLink) string {
	if partner, err := in.partnerOf(pl, xmldoc.Pos{}); err == nil {
		if ad, ok := partner.(exchange.Addressed); ok {
			return ad.Address()
		}
	}
	if as := in.eprs[pl]; as != nil {
		return withoutUserinfo(as.Addr)
	}
	if pl.PartnerEP != nil {
		return withoutUserinfo(pl.PartnerEP.Address)
	}
	return ""
}

// withoutUserinfo drops the user:password@ of an address, parsed or
// not (redact.WithoutUserinfo).
func withoutUserinfo(s string) string { return redact.WithoutUserinfo(s) }

// checkReply checks a partner's answer m to invoke a against the
// schemas of the operation's output message (replycheck): an answer they
// refuse raises bpel:invalidVariables at the invoke, naming the partner,
// its address, the operation and what broke, in both modes alike (a
// fault, as a declared fault is: the partner did answer).
func (in *Instance) checkReply(a *plan.Invoke, m *exchange.Message) error {
	if err := replycheck.Check(a.ReplySchema, a.Op.Output, m); err != nil {
		return in.faultf(a.Pos, "invalidVariables", "partner %s (%s) answered %s with a message its schema refuses: %v", a.Pl.Name, in.partnerAddress(a.Pl), a.Op.Name, err)
	}
	return nil
}

// Markers of an invoke's or REST activity's frame (frame.k).
const (
	// kAnswer: the answer of its asynchronous call is in.
	kAnswer int64 = 1
	// kFailed: the instance is suspended on this activity's failure.
	kFailed int64 = 2
	// kFault: an operator chose Fault: throw activityFailure here.
	kFault int64 = 3
	// kCancel: an operator chose Cancel: complete without effect.
	kCancel int64 = 4
)

// recoveryStep runs the recovery action marked on the failed frame f of
// an invoke or REST activity at position at: ok reports that it applied
// (done: the activity completes; err: the fault it throws).
func (in *Instance) recoveryStep(f *frame, at xmldoc.Pos) (done bool, err error, ok bool) {
	switch f.k {
	case kFault:
		f.k = 0
		reason := in.suspendReason
		if reason == "" {
			reason = "the activity failed"
		}
		if iv, ok := f.act.(*plan.Invoke); ok {
			// The same fault and data a failed call throws by policy.
			return false, failureInvoke(iv, in, errors.New(reason)), true
		}
		return false, &faultValue{Name: ActivityFailure, Reason: reason, at: at}, true
	case kCancel:
		f.k = 0
		return true, nil, true
	}
	// kFailed met in a run (a resumed instance): run it again.
	f.k = 0
	return false, nil, false
}
