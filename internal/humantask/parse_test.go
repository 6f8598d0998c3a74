package humantask

import (
	"encoding/xml"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

const htHead = `<htd:humanInteractions xmlns:htd="http://docs.oasis-open.org/ns/bpel4people/ws-humantask/200803" xmlns:t="urn:t" targetNamespace="urn:t">
`

// TestParseHTBad: every broken definition is refused with the file, the
// element and the line.
func TestParseHTBad(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not humanInteractions", `<x/>`, "bad.ht:1: <x>: want htd:humanInteractions"},
		{"malformed", htHead + `<htd:tasks>`, "bad.ht:2: malformed XML"},
		{"no interface", htHead + `<htd:tasks>
<htd:task name="A"><htd:peopleAssignments><htd:potentialOwners><htd:from><htd:literal><u><user>x</user></u></htd:literal></htd:from></htd:potentialOwners></htd:peopleAssignments></htd:task>
</htd:tasks></htd:humanInteractions>`, `bad.ht:3: <task>: task "A" has no htd:interface`},
		{"no potential owners", htHead + `<htd:tasks>
<htd:task name="A"><htd:interface portType="t:P" operation="o"/></htd:task>
</htd:tasks></htd:humanInteractions>`, `bad.ht:3: <task>: task "A" has no potentialOwners`},
		{"unknown group", htHead + `<htd:tasks>
<htd:task name="A"><htd:interface portType="t:P" operation="o"/>
<htd:peopleAssignments><htd:potentialOwners>
<htd:from logicalPeopleGroup="nobody"/></htd:potentialOwners></htd:peopleAssignments></htd:task>
</htd:tasks></htd:humanInteractions>`, `bad.ht:5: <from>: logicalPeopleGroup "nobody" is not defined`},
		{"bad priority", htHead + `<htd:tasks>
<htd:task name="A"><htd:interface portType="t:P" operation="o"/>
<htd:priority>1 +</htd:priority>
<htd:peopleAssignments><htd:potentialOwners><htd:from>'x'</htd:from></htd:potentialOwners></htd:peopleAssignments></htd:task>
</htd:tasks></htd:humanInteractions>`, `bad.ht:4: <priority>: expression "1 +"`},
		{"bad duration", htHead + `<htd:tasks>
<htd:task name="A"><htd:interface portType="t:P" operation="o"/>
<htd:peopleAssignments><htd:potentialOwners><htd:from>'x'</htd:from></htd:potentialOwners></htd:peopleAssignments>
<htd:deadlines><htd:startDeadline name="d">
<htd:for>'soon'</htd:for>
<htd:escalation name="e"><htd:reassignment><htd:potentialOwners><htd:from>'y'</htd:from></htd:potentialOwners></htd:reassignment></htd:escalation>
</htd:startDeadline></htd:deadlines></htd:task>
</htd:tasks></htd:humanInteractions>`, `bad.ht:6: <for>: htd:for "'soon'"`},
		{"twice", htHead + `<htd:tasks>
<htd:task name="A"><htd:interface portType="t:P" operation="o"/><htd:peopleAssignments><htd:potentialOwners><htd:from>'x'</htd:from></htd:potentialOwners></htd:peopleAssignments></htd:task>
<htd:task name="A"><htd:interface portType="t:P" operation="o"/><htd:peopleAssignments><htd:potentialOwners><htd:from>'x'</htd:from></htd:potentialOwners></htd:peopleAssignments></htd:task>
</htd:tasks></htd:humanInteractions>`, `bad.ht:4: <task>: "A" is defined twice (first at bad.ht:3)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ParseHT("bad.ht", []byte(tc.body), &Definitions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestParseExample: the example's definition, as parsed.
func TestParseExample(t *testing.T) {
	defs, err := LoadDefinitions("../../deploy/expense-approval")
	if err != nil {
		t.Fatal(err)
	}
	d := defs.Tasks[approveExpense]
	if d == nil {
		t.Fatalf("no ApproveExpense in %v", defs.Tasks)
	}
	tsk := "urn:example:expense:task"
	if d.Interface != (Interface{PortType: xml.Name{Space: tsk, Local: "ApprovalPT"}, Operation: "approve",
		ResponsePortType: xml.Name{Space: tsk, Local: "ApprovalCallbackPT"}, ResponseOperation: "approvalResponse"}) {
		t.Errorf("interface %+v", d.Interface)
	}
	if d.Publish != (ServiceRef{Service: xml.Name{Space: tsk, Local: "ApprovalService"}, Port: "ApprovalPort"}) ||
		d.Callback.Service.Local != "ApprovalCallbackService" {
		t.Errorf("htconfig: publish %+v callback %+v", d.Publish, d.Callback)
	}
	if len(d.Deadlines) != 1 || d.Deadlines[0].Kind != StartDeadline || len(d.Deadlines[0].Escalations[0].Reassign) != 1 {
		t.Errorf("deadlines %+v", d.Deadlines)
	}
	if len(d.Presentation.Parameters) != 2 || d.Presentation.Subject != "Expense of $amount$ by $employee$" {
		t.Errorf("presentation %+v", d.Presentation)
	}
}

// TestParseHTConfigBad: htconfig.xml's problems name file and line; an
// entry for a task the .ht files do not define is refused at deploy.
func TestParseHTConfigBad(t *testing.T) {
	_, err := ParseHTConfig("htconfig.xml", []byte(`<hic:HumanInteractionsConfiguration xmlns:hic="http://wso2.org/ht/schema/deployment/config" xmlns:t="urn:t">
<hic:task qname="t:A"><hic:publish><hic:service name="t:S"/></hic:publish></hic:task>
</hic:HumanInteractionsConfiguration>`))
	if err == nil || !strings.Contains(err.Error(), "htconfig.xml:2: <service>: port is missing") {
		t.Errorf("got %v", err)
	}
	dir := t.TempDir()
	ht, _ := os.ReadFile("../../deploy/expense-approval/ApproveExpense.ht")
	_ = os.WriteFile(dir+"/a.ht", ht, 0o644)
	_ = os.WriteFile(dir+"/htconfig.xml", []byte(`<hic:HumanInteractionsConfiguration xmlns:hic="http://wso2.org/ht/schema/deployment/config" xmlns:t="urn:example:expense:task">
<hic:task qname="t:Nope"><hic:publish><hic:service name="t:S" port="P"/></hic:publish></hic:task>
</hic:HumanInteractionsConfiguration>`), 0o644)
	if _, err := LoadDefinitions(dir); err == nil || !strings.Contains(err.Error(), "htconfig.xml:2: <task>: task Nope is not defined") {
		t.Errorf("got %v", err)
	}
}

// TestParsePeople: the people file's lines, and its errors by line
// number (never the line's content, which holds a hash).
func TestParsePeople(t *testing.T) {
	h := "$2a$04$" + strings.Repeat("a", 53)
	users, err := ParsePeople([]byte("# c\n\nann:" + h + ":managers, staff ,managers\nbob:" + h + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := users["ann"].groups; len(g) != 2 || g[0] != "managers" || g[1] != "staff" {
		t.Errorf("ann's groups %v", g)
	}
	if len(users["bob"].groups) != 0 {
		t.Errorf("bob's groups %v", users["bob"].groups)
	}
	for _, tc := range []struct{ in, want string }{
		{"ann", "line 1: want user:"},
		{"ann:secret", `line 1: user "ann": the password is not a bcrypt hash`},
		{"ann:" + h + "\nann:" + h, `line 2: user "ann" given twice`},
		{"a b:" + h, "line 1: a user name has no blanks"},
	} {
		_, err := ParsePeople([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), h) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestPeopleFileReload: a changed people file is read again; a broken
// change keeps the users read before; a file others may read is refused.
func TestPeopleFileReload(t *testing.T) {
	d := testPeople(t, map[string]string{"ann": "managers"})
	now := d.now()
	d.now = func() time.Time { return now }
	if m := d.Members("directors"); len(m) != 0 {
		t.Fatalf("directors %v", m)
	}
	add := testPeople(t, map[string]string{"ann": "managers,directors"})
	b, _ := os.ReadFile(add.path)
	if err := os.WriteFile(d.path, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	if m := d.Members("directors"); len(m) != 1 || m[0] != "ann" {
		t.Errorf("after the change, directors are %v", m)
	}
	if err := os.WriteFile(d.path, []byte("broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	if _, ok := d.Lookup("ann"); !ok {
		t.Error("a broken change dropped the users")
	}
	if err := os.Chmod(d.path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDirectory(d.path, nil); !errors.Is(err, ErrPeopleFileMode) {
		t.Errorf("a world-readable people file: %v", err)
	}
}
