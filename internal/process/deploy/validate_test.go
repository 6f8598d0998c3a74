package deploy

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/process/xmldoc"
)

// TestValidate: an element or attribute of ODE's deploy namespace or
// orchd's that neither knows, or a known one out of place, is an error
// with its line and the nearest known name; other namespaces are
// extensions and pass.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, xml string
		err       string // "" none; else every line of it must be in the errors
	}{
		{"ODE's elements", `<active>true</active><retired>false</retired><in-memory>true</in-memory>
<property name="p:x"><v xmlns="urn:v">1</v></property>
<process-events generate="all"><enable-event>correlation</enable-event><scope-events name="s"><enable-event>scopeHandling</enable-event></scope-events></process-events>
<provide partnerLink="c"><service name="p:S" port="P"/><enableSharing/></provide>
<invoke partnerLink="r" usePeer2Peer="false"><service name="p:S" port="P"><x:ext xmlns:x="urn:x"/></service></invoke>
<mex-interceptors><mex-interceptor><class-name>a.B</class-name></mex-interceptor></mex-interceptors>
<type>p:P</type>
<cleanup on="success"><category>all</category><filter>x</filter></cleanup>
<schedule when="0 0 * * *"><cleanup><category>instance</category></cleanup></schedule>`, ""},
		{"orchd's elements", `<o:maxSteps>5</o:maxSteps><o:uncaughtFailure>fault</o:uncaughtFailure><o:compat>ode</o:compat><o:retention completed="P7D" faulted="PT1H"/>
<provide partnerLink="c"><service name="p:S" port="P"/><o:replyTimeout operation="op">PT1S</o:replyTimeout></provide>
<invoke partnerLink="r"><service name="p:S" port="P"/><o:timeout operation="op">PT1S</o:timeout><o:idempotent operation="op"/><o:validateReplies/><o:addressing/></invoke>`, ""},
		{"other namespaces", `<x:anything xmlns:x="urn:x"><in-memorry/></x:anything>
<invoke partnerLink="r" xmlns:x="urn:x" x:note="n"><service name="p:S" port="P"/><x:timout/></invoke>`, ""},
		{"in-memorry", "\n<in-memorry>true</in-memorry>",
			`deploy.xml:4: <in-memorry>: unknown element in <process> of ODE's deploy namespace; did you mean in-memory?`},
		{"orchd:timout", `<invoke partnerLink="r"><service name="p:S" port="P"/>
<o:timout operation="op">PT2S</o:timout></invoke>`,
			`deploy.xml:4: <o:timout>: unknown element of orchd's deploy namespace (urn:orchd:deploy) in <invoke>; did you mean timeout?`},
		{"orchd:retension", `<o:retension completed="P1D"/>`,
			`deploy.xml:3: <o:retension>: unknown element of orchd's deploy namespace (urn:orchd:deploy) in <process>; did you mean retention?`},
		{"orchd:retention attribute typo", `<o:retention complete="P1D"/>`,
			`deploy.xml:3: <o:retention>: unknown attribute complete; did you mean completed?`},
		{"orchd:retention bad duration", `<o:retention faulted="a week"/>`,
			`deploy.xml:3: <orchd:retention faulted>: want a positive xsd:duration such as PT5M, not "a week"`},
		{"orchd element out of place", `<provide partnerLink="c"><service name="p:S" port="P"/><o:timeout>PT1S</o:timeout></provide>`,
			`deploy.xml:3: <o:timeout>: belongs in <invoke>, not in <provide>`},
		{"ODE element out of place", `<provide partnerLink="c"><service name="p:S" port="P"/><in-memory>true</in-memory></provide>`,
			`deploy.xml:3: <in-memory>: not allowed in <provide> (ODE's deploy.xml schema); known here: service, enableSharing`},
		{"attribute typo", `<provide partnerLnk="c"><service name="p:S" port="P"/></provide>`,
			`deploy.xml:3: <provide>: unknown attribute partnerLnk; did you mean partnerLink?`},
		{"orchd attribute typo", `<invoke partnerLink="r"><service name="p:S" port="P"/><o:timeout operaton="op">PT1S</o:timeout></invoke>`,
			`deploy.xml:3: <o:timeout>: unknown attribute operaton; did you mean operation?`},
		{"attribute on a leaf", `<in-memory value="true"/>`,
			`deploy.xml:3: <in-memory>: unknown attribute value: it takes none`},
		{"nothing near", `<persistence>no</persistence>`,
			`deploy.xml:3: <persistence>: unknown element in <process> of ODE's deploy namespace; known here: active, retired, in-memory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := parseProcess(t, tc.xml)
			got := ""
			if err := errs.Err(); err != nil {
				got = err.Error()
			}
			if tc.err == "" {
				if got != "" {
					t.Fatalf("errors:\n%s", got)
				}
				return
			}
			if !strings.Contains(got, tc.err) {
				t.Fatalf("errors:\n%s\nwant:\n%s", got, tc.err)
			}
		})
	}
}

// TestValidateLegacyNamespace: the fivesight namespace's deploy.xml is
// checked by the same names.
func TestValidateLegacyNamespace(t *testing.T) {
	src := `<dd:deploy xmlns:dd="http://ode.fivesight.com/schemas/2006/06/27/dd" xmlns:p="urn:p">
<dd:process name="p:P"><dd:in-memorry>true</dd:in-memorry>
<dd:property name="x" namespace="urn:x"/></dd:process></dd:deploy>`
	doc, err := xmldoc.Parse("deploy.xml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var errs xmldoc.Errors
	Parse(doc, &errs)
	want := `deploy.xml:2: <dd:in-memorry>: unknown element in <process> of ODE's deploy namespace; did you mean in-memory?`
	if err := errs.Err(); err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// TestValidateRepoBundles: every deploy.xml of the repository (the
// served bundles, the test fixtures, ODE's corpus in testdata) passes, so the
// check refuses typos and nothing ODE or orchd wrote.
func TestValidateRepoBundles(t *testing.T) {
	roots := []string{"../../../deploy", "../../../testdata", "../../../cmd", "../../../internal"}
	n := 0
	for _, root := range roots {
		if _, err := os.Stat(root); err != nil {
			t.Fatalf("the repository's %s: %v", root, err)
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "deploy.xml" {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			doc, err := xmldoc.Parse(path, b)
			if err != nil {
				return nil // malformed on purpose (bad-bundle fixtures)
			}
			if !isODE(doc.Root.NamespaceURI()) {
				return nil
			}
			var errs xmldoc.Errors
			validate(doc, doc.Root, &errs)
			if err := errs.Err(); err != nil {
				t.Errorf("%v", err)
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 50 {
		t.Fatalf("checked %d deploy.xml files; want the repository's (over 50)", n)
	}
	t.Logf("%d deploy.xml files pass", n)
}
