package process

import (
	"testing"

	"github.com/orchd/orchd/internal/process/plan"
)

// minimalBody is where good-minimal's process activity starts: the cases
// put their eventHandlers right before it, from line 16 on.
const minimalBody = "  <sequence>\n    <receive name=\"start\""

// Bad event handlers are refused at deploy naming file, line and
// element; good ones compile.
func TestEventHandlersCompile(t *testing.T) {
	tests := []struct {
		name     string
		handlers string // one element per line, from line 16
		line     int    // of the problem, 0 when it compiles
		want     string
	}{
		{name: "onEvent with variable and onAlarms", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="run" messageType="tns:req" variable="ev"><scope><reply partnerLink="client" operation="run" variable="out"/></scope></onEvent>
<onAlarm><for>'PT1S'</for><repeatEvery>'PT2S'</repeatEvery><scope><empty/></scope></onAlarm>
<onAlarm><until>'2030-01-01T00:00:00Z'</until><scope><empty/></scope></onAlarm>
</eventHandlers>`},
		{name: "onEvent with an element variable and fromParts", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="run" element="tns:req" variable="ev"><scope><exit/></scope></onEvent>
<onEvent partnerLink="client" operation="run" messageExchange="m2"><fromParts><fromPart part="payload" toVariable="body"/></fromParts><scope><messageExchanges><messageExchange name="m2"/></messageExchanges><assign><copy><from>$body/tns:id</from><to>$out.payload/tns:a</to></copy></assign></scope></onEvent>
</eventHandlers>`},
		{name: "empty", handlers: `<eventHandlers>
</eventHandlers>`, line: 16, want: "<eventHandlers>: SA00083: <eventHandlers> needs at least one <onEvent> or <onAlarm>"},
		{name: "messageType not the operation's", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="run" messageType="tns:resp" variable="ev"><scope><empty/></scope></onEvent>
</eventHandlers>`, line: 17, want: `SA00087: messageType resp is not req, the input message of operation "run"`},
		{name: "variable without type", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="run" variable="ev"><scope><empty/></scope></onEvent>
</eventHandlers>`, line: 17, want: `<onEvent partnerLink="client">: SA00090: an <onEvent> with a variable needs messageType or element`},
		{name: "wrong element", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="run" element="tns:resp" variable="ev"><scope><empty/></scope></onEvent>
</eventHandlers>`, line: 17, want: "SA00087: element resp is not the element of the single part"},
		{name: "body not a scope", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="run" messageType="tns:req" variable="ev">
<empty/>
</onEvent>
</eventHandlers>`, line: 18, want: "<empty>: <onEvent> holds exactly one <scope>"},
		{name: "no scope", handlers: `<eventHandlers>
<onAlarm><for>'PT1S'</for></onAlarm>
</eventHandlers>`, line: 17, want: "<onAlarm>: <onAlarm> holds no <scope>"},
		{name: "alarm without time", handlers: `<eventHandlers>
<onAlarm><scope><empty/></scope></onAlarm>
</eventHandlers>`, line: 17, want: "<onAlarm>: <onAlarm> needs <for>, <until> or <repeatEvery>"},
		{name: "unknown operation", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="nope" messageType="tns:req" variable="ev"><scope><empty/></scope></onEvent>
</eventHandlers>`, line: 17, want: `operation "nope" is not in the binding`},
		{name: "event variable is local to the handler", handlers: `<eventHandlers>
<onEvent partnerLink="client" operation="run" messageType="tns:req" variable="ev"><scope><empty/></scope></onEvent>
<onAlarm><for>'PT1S'</for><scope><assign><copy><from>$ev.payload/tns:id</from><to>$out.payload/tns:a</to></copy></assign></scope></onAlarm>
</eventHandlers>`, line: 18, want: "undeclared variable $ev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			procs := loadSnippet(t, minimalBody, tc.handlers, tc.line, tc.want)
			if tc.line == 0 && procs[0].Root.(*plan.Scope).Events == nil {
				t.Fatal("the process scope has no event handlers")
			}
		})
	}
}
