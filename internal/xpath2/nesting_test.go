package xpath2

import (
	"strings"
	"testing"
)

// TestNestingLimit: long expressions compile (in linear time: a 100,000
// term sum, an XQuery constructor with 100,000 attributes), deeply nested
// ones (XPath and XQuery) are refused with XPST0003 naming the limit
// instead of recursing 100,000 levels deep (which overflowed the stack).
func TestNestingLimit(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		xquery  bool
		refused bool
	}{
		{"100,000 term sum", "1" + strings.Repeat("+1", 99_999), false, false},
		{"parentheses within the limit", strings.Repeat("(", MaxNesting-1) + "1" + strings.Repeat(")", MaxNesting-1), false, false},
		{"100,000 parentheses", strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000), false, true},
		{"100,000 signs", strings.Repeat("-", 100_000) + "1", false, true},
		{"nested calls over the limit", strings.Repeat("abs(", MaxNesting) + "1" + strings.Repeat(")", MaxNesting), false, true},
		{"nested predicates over the limit", strings.Repeat("(1)[", MaxNesting) + "1" + strings.Repeat("]", MaxNesting), false, true},
		{"XQuery: 100,000 nested direct constructors", strings.Repeat("<a>", 100_000) + strings.Repeat("</a>", 100_000), true, true},
		{"XQuery: 100,000 nested enclosed expressions", strings.Repeat("<a>{", 100_000) + "1" + strings.Repeat("}</a>", 100_000), true, true},
		{"XQuery: 100,000 nested for", strings.Repeat("for $x in 1 return ", 100_000) + "1", true, true},
		{"XQuery: constructors within the limit", strings.Repeat("<a>", 200) + strings.Repeat("</a>", 200), true, false},
		{"XQuery: 100,000 attributes", "<a" + manyAttrs(100_000) + "/>", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			compile := Compile
			if tc.xquery {
				compile = CompileXQuery
			}
			_, err := compile(tc.src, nil)
			if !tc.refused {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "XPST0003") || !strings.Contains(err.Error(), "limit of 500") {
				t.Fatalf("Compile = %v, want XPST0003 naming the nesting limit", err)
			}
		})
	}
}

// manyAttrs returns n attributes y0="1" y1="1" ... for a start tag.
func manyAttrs(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(" y" + itoa(i) + `="1"`)
	}
	return b.String()
}
