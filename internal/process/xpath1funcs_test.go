package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeployRefusesUnknownFunctions: a function outside the expression
// language's library refuses the bundle at deploy, naming the file, line,
// element and function; the functions of the language deploy.
func TestDeployRefusesUnknownFunctions(t *testing.T) {
	const x1, x2 = "urn:oasis:names:tc:wsbpel:2.0:sublang:xpath1.0", "urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"
	tests := []struct {
		lang, expr string
		want       []string // nil: deploys
	}{
		{x1, "nosuch(1)", []string{"Bad.bpel:26: <from>:", "unknown function nosuch()"}},
		{x1, "concatt('a', 'b')", []string{"Bad.bpel:26: <from>:", "unknown function concatt(); did you mean concat?"}},
		{x1, "x:nosuch(1)", []string{"Bad.bpel:26: <from>:", "unknown function x:nosuch() (namespace urn:x)"}},
		{x1, "x:concat('a', 'b')", []string{"Bad.bpel:26: <from>:", "unknown function x:concat() (namespace urn:x)"}},
		{x1, "ode:split-to-elements('a b', ' ', 'e')", []string{"Bad.bpel:26: <from>:", "unknown function ode:split-to-elements() in XPath 1.0"}},
		{x1, "string-length(matches('a', 'a'))", []string{"Bad.bpel:26: <from>:", "function matches() is XPath 2.0's"}},
		{x1, "y:concat('a', 'b')", []string{"Bad.bpel:26: <from>:", `function y:concat(): undeclared namespace prefix "y"`}},
		{x1, "string-length(concat('a', \"nosuch(1)\")) + count(ancestor-or-self::node()) + 1", nil},
		{x1, "fn:string-length('abc') and 1 or (2) div (1) mod (1)", nil},
		{x2, "nosuch(1)", []string{"Bad.bpel:26: <from>:", "XPST0017", "unknown function nosuch#1"}},
		{x2, "x:concat('a', 'b')", []string{"Bad.bpel:26: <from>:", "XPST0017", "unknown function x:concat#2"}},
		{x2, "ode:nosuch()", []string{"Bad.bpel:26: <from>:", "XPST0017", "ode:nosuch#0"}},
		{x2, "fn:string-length(ode:dom-to-string($in.payload)) + count(matches('a', 'a'))", nil},
	}
	src, err := os.ReadFile(filepath.Join(bundlesDir, "bad-undeclared-var", "Bad.bpel"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, filepath.Join(bundlesDir, "bad-undeclared-var"), dir)
			from := `<from expressionLanguage="` + tc.lang + `" xmlns:x="urn:x" xmlns:ode="http://www.apache.org/ode/type/extension" xmlns:fn="http://www.w3.org/2005/xpath-functions">` +
				strings.NewReplacer("&", "&amp;", "<", "&lt;").Replace(tc.expr) + `</from>`
			bpelText := strings.Replace(string(src), "<from>$nope + 1</from>", from, 1)
			if err := os.WriteFile(filepath.Join(dir, "Bad.bpel"), []byte(bpelText), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadBundle(dir)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("LoadBundle: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("deployed; want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}
