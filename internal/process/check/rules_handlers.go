package check

import (
	"fmt"

	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// exitOnStandardFault is the scope whose exitOnStandardFault applies to
// scope s (s, or the nearest enclosing scope that sets it) when that is
// "yes", else nil ("no" is the process's default).
func exitOnStandardFault(s *ast.Element) *ast.Element {
	for a := s; a != nil; a = a.Parent() {
		if isScope(a) {
			if v := attr(a, "exitOnStandardFault"); v != "" {
				if v == "yes" {
					return a
				}
				return nil
			}
		}
	}
	return nil
}

func scopeLabel(s *ast.Element) string {
	if n := attr(s, "name"); n != "" {
		return fmt.Sprintf("%s %q", s.Tag, n)
	}
	return "the " + s.Tag
}

func checkExitOnStandardFault(p *pass) {
	p.each(func(c *ast.Element) {
		s := handlerScope(c)
		if s == nil || !isScope(s) || exitOnStandardFault(s) == nil {
			return
		}
		q, ok := qattr(c, "faultName")
		if !ok || (q.Space != xmldoc.NSBPEL && q.Space != xmldoc.NSBPEL2004) || !in(q.Local, standardFaults...) {
			return
		}
		if from := exitOnStandardFault(s); from != s {
			p.report(c, "%s inherits exitOnStandardFault=\"yes\" from %s, so it must not catch a standard fault; remove the catch, or set exitOnStandardFault=\"no\" on it", scopeLabel(s), scopeLabel(from))
			return
		}
		p.report(c, "%s has exitOnStandardFault=\"yes\", so it must not catch a standard fault; remove the catch or the attribute", scopeLabel(s))
	}, "catch")
}

// checkPlace reports each tag element that is not inside one of the
// handler kinds allowed.
func checkPlace(p *pass, tag string, allowed []string, where string) {
	p.each(func(e *ast.Element) {
		if h := nearestHandler(e); h == nil || !in(h.Tag, allowed...) {
			p.report(e, "<%s> may only be used in %s; move it there or use <throw>", tag, where)
		}
	}, tag)
}

func checkRethrowPlace(p *pass) {
	checkPlace(p, "rethrow", []string{"catch", "catchAll"}, "a fault handler (<catch> or <catchAll>)")
}

func checkCompensateScopePlace(p *pass) {
	checkPlace(p, "compensateScope", handlers, "a fault, compensation or termination handler")
}

func checkCompensatePlace(p *pass) {
	checkPlace(p, "compensate", handlers, "a fault, compensation or termination handler")
}

// enclosedScopes are the scopes (and invokes, which are implicit scopes)
// immediately enclosed by scope s: in its activity and in its event
// handlers, not inside another scope or in s's FCT-handlers.
func enclosedScopes(s *ast.Element) []*ast.Element {
	var out []*ast.Element
	var walk func(e *ast.Element)
	walk = func(e *ast.Element) {
		for _, c := range e.Children() {
			if !isBPEL(c) {
				continue
			}
			switch c.Node().(type) {
			case *ast.FaultHandlers, *ast.CompensationHandler, *ast.TerminationHandler:
				if e == s {
					continue
				}
			case *ast.Scope, *ast.Invoke:
				out = append(out, c)
				continue
			}
			walk(c)
		}
	}
	walk(s)
	return out
}

func checkCompensateTargetEnclosed(p *pass) {
	p.each(func(e *ast.Element) {
		h := nearestHandler(e)
		if h == nil {
			return // SA00007
		}
		s := handlerScope(h)
		if s == nil {
			return
		}
		target := attr(e, "target")
		for _, c := range enclosedScopes(s) {
			if attr(c, "name") == target {
				return
			}
		}
		p.report(e, "target %q is not a scope immediately enclosed by %s, whose handler this is; name one of its scopes", target, scopeLabel(s))
	}, "compensateScope")
}

func checkCompensateTargetKind(p *pass) {
	p.each(func(e *ast.Element) {
		h := nearestHandler(e)
		if h == nil || handlerScope(h) == nil {
			return
		}
		target := attr(e, "target")
		for _, c := range enclosedScopes(handlerScope(h)) {
			if attr(c, "name") != target {
				continue
			}
			// A scope's fault handlers are in <faultHandlers>, an invoke's
			// are its own <catch> and <catchAll> children.
			if c.Tag == "scope" && child(c, "faultHandlers") == nil && child(c, "compensationHandler") == nil {
				p.report(e, "target %q is a scope without a fault or compensation handler; give it one or compensate a scope that has one", target)
			}
			if c.Tag != "scope" && len(children(c, "catch"))+len(children(c, "catchAll"))+len(children(c, "compensationHandler")) == 0 {
				p.report(e, "target %q is an <invoke> without a fault or compensation handler; compensate a scope or give the invoke a handler", target)
			}
		}
		// A target naming an activity other than a scope or invoke is not
		// among the enclosed scopes: SA00077 reports it.
	}, "compensateScope")
}

func checkHandlerRootScope(p *pass) {
	p.each(func(h *ast.Element) {
		for _, a := range activityChildren(h) {
			if a.Tag == "scope" && child(a, "compensationHandler") != nil {
				p.report(child(a, "compensationHandler"), "the scope directly inside a fault, compensation or termination handler must not have a compensation handler; remove it or wrap the scope in another")
			}
		}
	}, handlers...)
}

func checkFaultHandlersEmpty(p *pass) {
	p.each(func(fh *ast.Element) {
		if len(children(fh, "catch"))+len(children(fh, "catchAll")) == 0 {
			p.report(fh, "<faultHandlers> needs at least one <catch> or <catchAll>; add one or remove the element")
		}
	}, "faultHandlers")
}

func checkCatchVariable(p *pass) {
	p.each(func(c *ast.Element) {
		mt, el := hasAttr(c, "faultMessageType"), hasAttr(c, "faultElement")
		switch {
		case hasAttr(c, "faultVariable") && mt == el:
			p.report(c, "a catch with faultVariable needs exactly one of faultMessageType and faultElement; keep the one that types the fault data")
		case !hasAttr(c, "faultVariable") && (mt || el):
			p.report(c, "faultMessageType and faultElement need a faultVariable; add one or remove the type")
		}
	}, "catch")
}

func checkIsolated(p *pass) {
	p.each(func(s *ast.Element) {
		if !yes(s, "isolated") {
			return
		}
		for a := s.Parent(); a != nil; a = a.Parent() {
			if isBPEL(a) && a.Tag == "scope" && yes(a, "isolated") {
				p.report(s, "an isolated scope must not be nested in isolated %s; remove one of the isolated=\"yes\"", scopeLabel(a))
				return
			}
		}
	}, "scope")
}

func checkScopeNames(p *pass) {
	p.each(func(s *ast.Element) {
		seen := map[string]bool{}
		for _, c := range enclosedScopes(s) {
			n := attr(c, "name")
			if c.Tag != "scope" || n == "" {
				continue
			}
			if seen[n] {
				p.report(c, "%s already has an immediately enclosed scope named %q; rename one", scopeLabel(s), n)
			}
			seen[n] = true
		}
	}, "process", "scope")
}

func checkDuplicateCatch(p *pass) {
	check := func(cs []*ast.Element) {
		seen := map[string]bool{}
		for _, c := range cs {
			if c.Tag != "catch" {
				continue
			}
			fn, _ := qattr(c, "faultName")
			mt, _ := qattr(c, "faultMessageType")
			fe, _ := qattr(c, "faultElement")
			k := fmt.Sprint(fn, "|", mt, "|", fe)
			if seen[k] {
				p.report(c, "an identical <catch> (same faultName and fault type) is already in these fault handlers; remove one")
			}
			seen[k] = true
		}
	}
	p.each(func(fh *ast.Element) { check(fh.Children()) }, "faultHandlers")
	p.each(func(inv *ast.Element) { check(children(inv, "catch")) }, "invoke")
}

func checkEventHandlersEmpty(p *pass) {
	p.each(func(eh *ast.Element) {
		if len(children(eh, "onEvent"))+len(children(eh, "onAlarm")) == 0 {
			p.report(eh, "<eventHandlers> needs at least one <onEvent> or <onAlarm>; add one or remove the element")
		}
	}, "eventHandlers")
}
