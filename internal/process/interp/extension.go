package interp

import (
	"errors"
	"strings"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

func stepExtActivity(a *plan.ExtActivity, in *Instance, _ *frame) (plan.Activity, bool, error) {
	if err := in.runExtension(a.Pos, func(v *extVars) error { return a.Act.Run(in.ctx, v) }); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// stepExtWait runs a waiting extension activity: Start once (the key it
// returns initiates the activity's own correlation set, which the checkpoint
// keeps, so a loaded instance does not start again), then wait as a
// receive does for the message with that key, and hand it to Finish.
func stepExtWait(a *plan.ExtWait, in *Instance, _ *frame) (plan.Activity, bool, error) {
	var m *exchange.Message
	if in.inbox != nil {
		m = in.inbox.Input
	}
	set := a.Corrs[0].Set.Name
	if ok, err := in.take(&a.Inbound, a.Pos); err != nil || ok {
		if ok {
			delete(in.corr, set) // a loop's next round waits anew
			err = in.runExtension(a.Pos, func(v *extVars) error { return a.Act.Finish(in.ctx, v, m) })
		}
		return nil, err == nil, err
	}
	if _, started := in.corr[set]; !started {
		ws, key := plan.WaitStart{Process: in.proc.Name, Instance: in.id, Endpoint: a.Pl.Provided}, ""
		err := in.runExtension(a.Pos, func(v *extVars) (err error) { key, err = a.Act.Start(in.ctx, v, ws); return err })
		if err != nil {
			return nil, false, err
		}
		if in.corr == nil {
			in.corr = map[string]string{}
		}
		in.corr[set] = key
	}
	if err := in.await(&a.Inbound, a.Pos); err != nil {
		return nil, false, err
	}
	return nil, false, errBlocked
}

// ExtensionWaits are the keys of the extension activities it waits at.
func (in *Instance) ExtensionWaits() []string {
	var keys []string
	for set, key := range in.corr {
		if strings.HasPrefix(set, plan.ExtWaitSetPrefix) {
			keys = append(keys, key)
		}
	}
	return keys
}

// runExtension runs an extension's call for in, turning its error into a
// fault at pos.
func (in *Instance) runExtension(at xmldoc.Pos, call func(*extVars) error) error {
	vars := &extVars{in: in, at: at}
	err := call(vars)
	vars.in = nil // the action must not keep it
	if err == nil {
		return nil
	}
	var fv *faultValue
	if errors.As(err, &fv) {
		return fv
	}
	var xf *plan.ExtensionFault
	if errors.As(err, &xf) {
		return &faultValue{Name: exchange.QName{Space: xf.Space, Local: xf.Local}, Reason: xf.Reason, at: at}
	}
	return in.faultf(at, "subLanguageExecutionFault", "extension: %v", err)
}

// extVars implements ExtensionVariables over an instance.
type extVars struct {
	in *Instance
	at xmldoc.Pos
}

func (x *extVars) Read(ev plan.ExtensionVariable) *etree.Element {
	in, v := x.in, ev.V
	if v.Msg != nil {
		m := etree.NewElement("message")
		s := in.Slot(v)
		some := false
		for i, pd := range v.Msg.Parts {
			w := s.Child[i].(*etree.Element)
			if pd.Element.IsZero() {
				if len(w.Child) == 0 && len(w.Attr) == 0 {
					continue
				}
				cp := w.Copy()
				cp.Space, cp.Tag = "", pd.Name
				m.AddChild(cp)
				some = true
				continue
			}
			if c := expr.FirstElement(w); c != nil {
				part := m.CreateElement(pd.Name)
				cp := c.Copy()
				expr.FixNamespaces(cp, c, nil)
				part.AddChild(cp)
				some = true
			}
		}
		if !some {
			return nil
		}
		return m
	}
	base := expr.BaseNode(in.root, v, -1)
	if base == nil {
		return nil
	}
	cp := base.Copy()
	expr.FixNamespaces(cp, base, nil)
	if v.Elem.IsZero() {
		if len(cp.Child) == 0 && len(cp.Attr) == 0 {
			return nil
		}
		cp.Space, cp.Tag = "", v.Name
	}
	return cp
}

func (x *extVars) Write(ev plan.ExtensionVariable, value *etree.Element) error {
	in, v := x.in, ev.V
	if value == nil {
		return in.faultf(x.at, "selectionFailure", "extension wrote nothing to variable %s", v.Name)
	}
	if v.Msg != nil {
		m := CopyMessage(in.message(v))
		for _, pe := range value.ChildElements() {
			i := partIndex(v.Msg, pe.Tag)
			if i < 0 {
				return in.faultf(x.at, "mismatchedAssignmentFailure", "extension wrote part %s, which message %s of variable %s lacks", pe.Tag, v.Msg.Name.Local, v.Name)
			}
			pd := v.Msg.Parts[i]
			if pd.Element.IsZero() {
				cp := pe.Copy()
				expr.FixNamespaces(cp, pe, nil)
				m.Parts[pd.Name] = cp
				continue
			}
			c := expr.FirstElement(pe)
			if c == nil {
				return in.faultf(x.at, "mismatchedAssignmentFailure", "extension wrote part %s of variable %s without its element", pe.Tag, v.Name)
			}
			cp := c.Copy()
			expr.FixNamespaces(cp, c, nil)
			m.Parts[pd.Name] = cp
		}
		in.StoreMessage(v, m)
		return nil
	}
	op := &plan.CopyOp{Pos: x.at, To: plan.ToSpec{V: v, Part: -1}}
	dst, err := evalToCopyOp(op, in)
	if err != nil {
		return err
	}
	in.touch(v)
	return replaceCopyOp(op, in, source{node: expr.Node{Tok: value, Attr: -1}}, dst)
}

// partIndex is the index of the part name of m, or -1.
func partIndex(m *exchange.MessageDesc, name string) int {
	for i, pd := range m.Parts {
		if pd.Name == name {
			return i
		}
	}
	return -1
}
