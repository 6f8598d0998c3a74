package expr

import "testing"

// FuzzCheckXPath1Functions: the function scan never panics, and what it
// lets through the XPath 1.0 compiler compiles or refuses with an error,
// never a panic.
func FuzzCheckXPath1Functions(f *testing.F) {
	for _, s := range []string{"concat('a', \"b(\")", "x:f(1)", "child::a/text()", "a and (b)", "@x:y", "$v.p/q", "fn:count(//a)", "'unterminated"} {
		f.Add(s)
	}
	ns := map[string]string{"x": "urn:x", "fn": "http://www.w3.org/2005/xpath-functions"}
	f.Fuzz(func(t *testing.T, s string) {
		if err := CheckXPath1Functions(s, ns); err == nil {
			_, _ = NewExpr(s, s, ns)
		}
	})
}
