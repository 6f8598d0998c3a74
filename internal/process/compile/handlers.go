package compile

import (
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
)

// faultHandlers compiles a <faultHandlers> element: its catches and
// catchAll, in order.
func (c *compiler) faultHandlers(e *ast.Element) *plan.FaultHandlers {
	return c.faultHandlerList(e.Children())
}

// faultHandlerList compiles catch and catchAll elements.
func (c *compiler) faultHandlerList(list []*ast.Element) *plan.FaultHandlers {
	h := &plan.FaultHandlers{}
	for _, ce := range list {
		if !isBPEL(ce) {
			continue
		}
		switch ce.Node().(type) {
		case *ast.Catch:
			ct := &plan.Catch{}
			ct.FaultName, _ = c.qnameAttr(ce, "faultName")
			c.scopes = append(c.scopes, map[string]*expr.Var{})
			if vn := ce.AttrOr("faultVariable", ""); vn != "" {
				v := &expr.Var{Name: vn, Pos: c.pos(ce)}
				if mt, ok := c.qnameAttr(ce, "faultMessageType"); ok {
					v.Msg = c.w.Messages[mt]
					if v.Msg == nil {
						c.errorf(ce, "unknown faultMessageType %s", mt)
						v.Msg = &exchange.MessageDesc{Name: mt}
					}
				} else if el, ok := c.qnameAttr(ce, "faultElement"); ok {
					v.Elem = el
				} else {
					c.errorf(ce, "catch with faultVariable needs faultMessageType or faultElement")
				}
				c.p.Vars = append(c.p.Vars, v)
				v.Slot = len(c.p.Vars)
				c.scopes[len(c.scopes)-1][vn] = v
				ct.V = v
			}
			ct.Act = c.onlyActivity(ce)
			c.scopes = c.scopes[:len(c.scopes)-1]
			h.Catches = append(h.Catches, ct)
		case *ast.CatchAll:
			h.CatchAll = c.onlyActivity(ce)
		default:
			c.errorf(ce, "unexpected element in faultHandlers")
		}
	}
	return h
}
