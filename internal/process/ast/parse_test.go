package ast

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

const head = `<process xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable" xmlns:tns="urn:t" name="P" targetNamespace="urn:t">
`

func parse(t *testing.T, src string) *Process {
	t.Helper()
	d, err := xmldoc.Parse("p.bpel", []byte(src))
	if err != nil {
		t.Fatalf("xmldoc.Parse: %v", err)
	}
	return Parse(d)
}

// TestParseNodes: each construct becomes its type, with its attributes and
// children in its fields and its line.
func TestParseNodes(t *testing.T) {
	p := parse(t, head+`<import importType="http://schemas.xmlsoap.org/wsdl/" location="a.wsdl" namespace="urn:a"/>
<partnerLinks><partnerLink name="client" partnerLinkType="tns:LT" myRole="me"/></partnerLinks>
<variables><variable name="v" messageType="tns:M"/>
<variable name="n" type="xsd:int"><from>1</from></variable></variables>
<correlationSets><correlationSet name="cs" properties="tns:id"/></correlationSets>
<faultHandlers><catch faultName="tns:f" faultVariable="fv"><empty/></catch><catchAll><exit/></catchAll></faultHandlers>
<eventHandlers><onEvent partnerLink="client" operation="ev" variable="x"><scope><empty/></scope></onEvent>
<onAlarm><for>'PT1S'</for><scope><empty/></scope></onAlarm></eventHandlers>
<sequence name="main">
<receive name="r" partnerLink="client" operation="op" variable="v" createInstance="yes">
<correlations><correlation set="cs" initiate="yes"/></correlations></receive>
<flow><links><link name="l"/></links>
<assign><sources><source linkName="l"><transitionCondition>true()</transitionCondition></source></sources>
<copy keepSrcElementName="yes"><from><literal><a/></literal></from><to variable="v" part="p"><query>b</query></to></copy></assign>
<empty><targets><joinCondition>$l</joinCondition><target linkName="l"/></targets></empty></flow>
<if><condition>1=1</condition><empty/><elseif><condition>2=2</condition><exit/></elseif><else><rethrow/></else></if>
<while><condition>false()</condition><wait><until>'2026'</until></wait></while>
<repeatUntil><empty/><condition>true()</condition></repeatUntil>
<forEach counterName="i" parallel="no"><startCounterValue>1</startCounterValue><finalCounterValue>2</finalCounterValue>
<completionCondition><branches>1</branches></completionCondition><scope><empty/></scope></forEach>
<pick><onMessage partnerLink="client" operation="op2" variable="v"><fromParts><fromPart part="p" toVariable="w"/></fromParts><empty/></onMessage><onAlarm><for>'PT1S'</for><empty/></onAlarm></pick>
<invoke partnerLink="client" operation="call" inputVariable="v"><toParts><toPart part="p" fromVariable="v"/></toParts><catch faultName="tns:g"><empty/></catch><compensationHandler><empty/></compensationHandler></invoke>
<scope isolated="yes"><compensationHandler><compensate/></compensationHandler><terminationHandler><compensateScope target="s"/></terminationHandler><throw faultName="tns:f"/></scope>
<reply partnerLink="client" operation="op" variable="v"/>
<validate variables="v"/>
<extensionActivity><x:do xmlns:x="urn:x"/></extensionActivity>
</sequence>
</process>`)
	if p.Name != "P" || p.TargetNamespace != "urn:t" || p.Pos.Line != 1 {
		t.Errorf("process %q %q line %d", p.Name, p.TargetNamespace, p.Pos.Line)
	}
	if len(p.Imports) != 1 || p.Imports[0].Location != "a.wsdl" || p.Imports[0].Pos.Line != 2 {
		t.Errorf("imports %+v", p.Imports)
	}
	if pl := p.PartnerLinks.PartnerLinks[0]; pl.Name != "client" || pl.MyRole != "me" || pl.PartnerLinkType != "tns:LT" {
		t.Errorf("partnerLink %+v", pl)
	}
	vs := p.Variables.Variables
	if len(vs) != 2 || vs[0].MessageType != "tns:M" || vs[1].From == nil || strings.TrimSpace(vs[1].From.Text()) != "1" || vs[1].Pos.Line != 5 {
		t.Errorf("variables %+v", vs)
	}
	if cs := p.CorrelationSets.CorrelationSets[0]; cs.Properties != "tns:id" {
		t.Errorf("correlationSet %+v", cs)
	}
	fh := p.FaultHandlers
	if len(fh.Catches) != 1 || fh.Catches[0].FaultVariable != "fv" || fh.CatchAll == nil {
		t.Errorf("faultHandlers %+v", fh)
	}
	if _, ok := fh.CatchAll.Activity.(*Exit); !ok {
		t.Errorf("catchAll activity %T", fh.CatchAll.Activity)
	}
	eh := p.EventHandlers
	if len(eh.OnEvents) != 1 || eh.OnEvents[0].Scope == nil || len(eh.OnAlarms) != 1 || eh.OnAlarms[0].For == nil {
		t.Errorf("eventHandlers %+v", eh)
	}
	seq, ok := p.Activity.(*Sequence)
	if !ok || seq.Name != "main" || seq.Pos.Line != 10 {
		t.Fatalf("activity %T", p.Activity)
	}
	var kinds []string
	for _, a := range seq.Activities {
		kinds = append(kinds, reflect.TypeOf(a).Elem().Name())
	}
	want := []string{"Receive", "Flow", "If", "While", "RepeatUntil", "ForEach", "Pick", "Invoke", "Scope", "Reply", "Validate", "ExtensionActivity"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("sequence holds %v, want %v", kinds, want)
	}
	rcv := seq.Activities[0].(*Receive)
	if rcv.CreateInstance != "yes" || rcv.Correlations.Correlations[0].Set != "cs" || rcv.Pos.Line != 11 {
		t.Errorf("receive %+v", rcv)
	}
	flow := seq.Activities[1].(*Flow)
	if flow.Links.Links[0].Name != "l" || len(flow.Activities) != 2 {
		t.Errorf("flow %+v", flow)
	}
	asg := flow.Activities[0].(*Assign)
	if src := asg.Sources.Sources[0]; src.LinkName != "l" || src.TransitionCondition == nil {
		t.Errorf("sources %+v", asg.Sources)
	}
	cp := asg.Copies[0]
	if cp.KeepSrcElementName != "yes" || cp.From.Literal == nil || cp.From.Literal.Elements != 1 || cp.From.Literal.HasText ||
		cp.To.Variable != "v" || cp.To.Part != "p" || cp.To.Query == nil {
		t.Errorf("copy %+v", cp)
	}
	if tg := flow.Activities[1].Base().Targets; tg.JoinCondition == nil || tg.Targets[0].LinkName != "l" {
		t.Errorf("targets %+v", tg)
	}
	iff := seq.Activities[2].(*If)
	if iff.Condition == nil || len(iff.ElseIfs) != 1 || iff.Else == nil {
		t.Errorf("if %+v", iff)
	}
	if _, ok := iff.Else.Activity.(*Rethrow); !ok {
		t.Errorf("else activity %T", iff.Else.Activity)
	}
	if w := seq.Activities[3].(*While).Activity.(*Wait); w.Until == nil || w.For != nil {
		t.Errorf("wait %+v", w)
	}
	fe := seq.Activities[5].(*ForEach)
	if fe.CounterName != "i" || fe.StartCounterValue == nil || fe.FinalCounterValue == nil || fe.CompletionCondition.Branches == nil || fe.Scope == nil {
		t.Errorf("forEach %+v", fe)
	}
	pk := seq.Activities[6].(*Pick)
	if len(pk.OnMessages) != 1 || pk.OnMessages[0].FromParts.FromParts[0].ToVariable != "w" || len(pk.OnAlarms) != 1 {
		t.Errorf("pick %+v", pk)
	}
	inv := seq.Activities[7].(*Invoke)
	if inv.InputVariable != "v" || len(inv.Catches) != 1 || inv.CompensationHandler == nil || inv.ToParts.ToParts[0].FromVariable != "v" {
		t.Errorf("invoke %+v", inv)
	}
	sc := seq.Activities[8].(*Scope)
	if sc.Isolated != "yes" || sc.CompensationHandler == nil || sc.TerminationHandler == nil {
		t.Errorf("scope %+v", sc)
	}
	if _, ok := sc.Activity.(*Throw); !ok {
		t.Errorf("scope activity %T", sc.Activity)
	}
	if cs := sc.TerminationHandler.Activity.(*CompensateScope); cs.Target != "s" {
		t.Errorf("compensateScope %+v", cs)
	}
	if x := seq.Activities[11].(*ExtensionActivity); x.Content == nil || x.Content.Tag != "do" || x.Content.Space != "urn:x" {
		t.Errorf("extensionActivity content %+v", x.Content)
	}
}

// TestParseForeign: what the language does not define stays a bare
// Element, in its place, with its position; it is no activity.
func TestParseForeign(t *testing.T) {
	tests := []struct {
		name, body string
		tag, space string
		line       int
	}{
		{"unknown BPEL tag", "<sequence>\n<frobnicate/></sequence>", "frobnicate", xmldoc.NSBPEL, 3},
		{"other namespace", "<sequence>\n<o:x xmlns:o='urn:o'/></sequence>", "x", "urn:o", 3},
		{"documentation", "<sequence>\n<documentation>hi</documentation></sequence>", "documentation", xmldoc.NSBPEL, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, head+tc.body+"</process>")
			seq := p.Activity.(*Sequence)
			if len(seq.Activities) != 0 {
				t.Errorf("activities %v", seq.Activities)
			}
			kids := seq.Children()
			if len(kids) != 1 {
				t.Fatalf("children %v", kids)
			}
			k := kids[0]
			if k.Tag != tc.tag || k.Space != tc.space || k.Pos.Line != tc.line || k.Parent() != &seq.Element || IsActivity(k) {
				t.Errorf("child %s {%s} line %d", k.Tag, k.Space, k.Pos.Line)
			}
		})
	}
}

// TestElementAttrs: Attr reads unqualified attributes only; AttrOr and Has
// match a local name under any prefix (etree's rule, which the compiler
// relied on); QNames resolve in the element's namespace context.
func TestElementAttrs(t *testing.T) {
	p := parse(t, head+`<empty name="e" x:name="q" xmlns:x="urn:x" y:only="1" xmlns:y="urn:y"/></process>`)
	e := p.Activity.(*Empty)
	tests := []struct {
		got, want string
	}{
		{e.Attr("name"), "e"},
		{e.Attr("only"), ""},
		{e.AttrOr("only", "-"), "1"},
		{e.AttrOr("x:name", "-"), "q"},
		{e.AttrOr("missing", "-"), "-"},
		{e.FullTag(), "empty"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%d: %q, want %q", i, tc.got, tc.want)
		}
	}
	if !e.Has("only") || e.HasAttr("only") || !e.HasAttr("name") {
		t.Errorf("Has/HasAttr")
	}
	sp, local, err := e.ResolveQName("tns:M", true)
	if err != nil || sp != "urn:t" || local != "M" {
		t.Errorf("ResolveQName = %q %q %v", sp, local, err)
	}
	if _, _, err := e.ResolveQName("nope:M", true); err == nil {
		t.Errorf("undeclared prefix resolved")
	}
}

// TestInspect: the walk visits every element once, in document order, and
// skips a subtree when told.
func TestInspect(t *testing.T) {
	p := parse(t, head+`<sequence><empty/><scope><sequence><exit/></sequence></scope><empty/></sequence></process>`)
	var got []string
	Inspect(p, func(n Node) bool {
		got = append(got, n.Elem().Tag)
		_, isScope := n.(*Scope)
		return !isScope
	})
	want := []string{"process", "sequence", "empty", "scope", "empty"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Inspect visited %v, want %v", got, want)
	}
}

// TestAttrNamespace: an attribute's prefix resolves where its element is,
// through the ancestors' declarations.
func TestAttrNamespace(t *testing.T) {
	p := parse(t, head+`<sequence xmlns:o="urn:o"><empty o:a="1" b="2" u:c="3"/></sequence></process>`)
	e := p.Activity.(*Sequence).Activities[0].Elem()
	want := map[string]string{"a": "urn:o", "b": "", "c": ""}
	for _, a := range e.Attrs {
		if w, ok := want[a.Key]; ok && e.AttrNamespace(a) != w {
			t.Errorf("%s:%s in %q, want %q", a.Space, a.Key, e.AttrNamespace(a), w)
		}
	}
}

// TestNilElementNode: a missing child's Node is nil, so a type switch on
// it takes no case.
func TestNilElementNode(t *testing.T) {
	p := parse(t, head+`<empty/></process>`)
	if n := p.Child("sequence").Node(); n != nil {
		t.Errorf("Node of a missing child = %T", n)
	}
}

// TestParseODE: the ODE extensions the compiler accepts are nodes of their
// own: the drafts' <then>, bpel4restlight activities and an invoke's
// activity recovery.
func TestParseODE(t *testing.T) {
	tests := []struct {
		name, body string
		check      func(t *testing.T, a Activity)
	}{
		{"then", `<if><condition>true()</condition><then><exit/></then></if>`, func(t *testing.T, a Activity) {
			i := a.(*If)
			if i.Then == nil || i.Activity != nil {
				t.Fatalf("then %v, activity %v", i.Then, i.Activity)
			}
			if _, ok := i.Then.Activity.(*Exit); !ok {
				t.Errorf("then holds %T", i.Then.Activity)
			}
		}},
		{"bpel4restlight", `<extensionActivity><r:GET xmlns:r="` + xmldoc.NSBPEL4RestLight + `" uri="http://x/"/></extensionActivity>`, func(t *testing.T, a Activity) {
			x := a.(*ExtensionActivity)
			r, ok := x.Content.Node().(*RestActivity)
			if !ok || r.Tag != "GET" || r.Attr("uri") != "http://x/" {
				t.Errorf("content %T %+v", x.Content.Node(), x.Content)
			}
			if IsActivity(r) {
				t.Errorf("a REST element is an activity only in its extensionActivity")
			}
		}},
		{"failureHandling", `<invoke partnerLink="p" operation="o"><f:failureHandling xmlns:f="` + xmldoc.NSODEActivityRecovery + `"><f:retryFor>2</f:retryFor></f:failureHandling></invoke>`, func(t *testing.T, a Activity) {
			inv := a.(*Invoke)
			if inv.FailureHandling == nil || inv.FailureHandling.Pos.Line != 3 {
				t.Errorf("failureHandling %+v", inv.FailureHandling)
			}
		}},
		{"no failureHandling", `<invoke partnerLink="p" operation="o"><f:other xmlns:f="` + xmldoc.NSODEActivityRecovery + `"/></invoke>`, func(t *testing.T, a Activity) {
			if fh := a.(*Invoke).FailureHandling; fh != nil {
				t.Errorf("failureHandling %+v", fh)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, head+"\n"+tc.body+"</process>")
			if p.Activity == nil {
				t.Fatalf("no activity")
			}
			tc.check(t, p.Activity)
		})
	}
}

// BenchmarkParse is the cost of the tree over the positioned document, for
// the example bundles' processes (the deploy benchmark is compile's
// BenchmarkLoadDeploy).
func BenchmarkParse(b *testing.B) {
	files, _ := filepath.Glob("../../../deploy/*/*.bpel")
	var docs []*xmldoc.Document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		d, err := xmldoc.Parse(filepath.Base(f), data)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		b.Fatal("no example processes")
	}
	for b.Loop() {
		for _, d := range docs {
			Parse(d)
		}
	}
}
