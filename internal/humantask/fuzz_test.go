package humantask

import (
	"os"
	"testing"
)

// FuzzParseHT: no .ht document makes the parser panic; one it accepts
// defines what it says it does.
func FuzzParseHT(f *testing.F) {
	if b, err := os.ReadFile("../../deploy/expense-approval/ApproveExpense.ht"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(htHead + `<htd:tasks><htd:task name="A"><htd:interface portType="t:P" operation="o"/></htd:task></htd:tasks></htd:humanInteractions>`))
	f.Add([]byte(`<x/>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		defs := &Definitions{}
		if err := ParseHT("f.ht", b, defs); err == nil {
			for n, d := range defs.Tasks {
				if d.Name != n || d.Notification || d.Interface.Operation == "" {
					t.Fatalf("accepted task %v: %+v", n, d)
				}
			}
		}
	})
}

// FuzzParseHTConfig: no htconfig.xml makes the parser panic; an accepted
// one's entries all publish a service and port.
func FuzzParseHTConfig(f *testing.F) {
	if b, err := os.ReadFile("../../deploy/expense-approval/htconfig.xml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`<hic:HumanInteractionsConfiguration xmlns:hic="http://wso2.org/ht/schema/deployment/config"/>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParseHTConfig("htconfig.xml", b)
		if err != nil {
			return
		}
		for n, en := range cfg.Entries {
			if en.Name != n || en.Publish.Port == "" {
				t.Fatalf("accepted entry %v: %+v", n, en)
			}
		}
	})
}

// FuzzParsePeople: no people file makes the parser panic; an accepted
// user has a bcrypt hash and no blank group.
func FuzzParsePeople(f *testing.F) {
	if b, err := os.ReadFile("../../deploy/expense-approval/people.txt"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("a:b:c\n# x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		users, err := ParsePeople(b)
		if err != nil {
			return
		}
		for u, p := range users {
			if u == "" || !isBcrypt(string(p.hash)) {
				t.Fatalf("accepted %q with hash %q", u, p.hash)
			}
			for _, g := range p.groups {
				if g == "" {
					t.Fatalf("%q has a blank group", u)
				}
			}
		}
	})
}
