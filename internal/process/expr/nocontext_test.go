package expr

import "testing"

// What an XPath 1.0 condition reads of a context node it does not have:
// relative paths and context functions, wherever their value is the
// expression's, but not inside predicates or after a variable.
func TestNeedsContext(t *testing.T) {
	tests := []struct{ src, want string }{
		{"NoConditionHere", "the relative path NoConditionHere (offset 0)"},
		{"tns:a/tns:b = 1", "the relative path tns:a (offset 0)"},
		{"true() and @id", "the relative path @id (offset 11)"},
		{".", "the relative path . (offset 0)"},
		{"count(x) > 0", "the relative path x (offset 6)"},
		{"not(string())", "string()"},
		{"$in.payload/tns:n = 1", ""},
		{"$in.payload/tns:n[. = 1] and name($in.payload/*) = 'n'", ""},
		{"bpel:getVariableProperty('in', 'tns:id') = 'x'", ""},
		{"/a/b", ""},
		{"($in.payload)[tns:n]", ""},
		{"string-length($s) > 2", ""},
		{"1 +", ""}, // does not parse: the compiler says so
	}
	for _, tc := range tests {
		if got := NeedsContext(tc.src); got != tc.want {
			t.Errorf("NeedsContext(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}
