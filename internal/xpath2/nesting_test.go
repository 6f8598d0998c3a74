package xpath2

import (
	"strings"
	"testing"
)

// TestNestingLimit: long expressions compile (in linear time: a 100,000
// term sum), deeply nested ones are refused with XPST0003 naming the
// limit instead of recursing 100,000 levels deep.
func TestNestingLimit(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		refused bool
	}{
		{"100,000 term sum", "1" + strings.Repeat("+1", 99_999), false},
		{"parentheses within the limit", strings.Repeat("(", MaxNesting-1) + "1" + strings.Repeat(")", MaxNesting-1), false},
		{"100,000 parentheses", strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000), true},
		{"100,000 signs", strings.Repeat("-", 100_000) + "1", true},
		{"nested calls over the limit", strings.Repeat("abs(", MaxNesting) + "1" + strings.Repeat(")", MaxNesting), true},
		{"nested predicates over the limit", strings.Repeat("(1)[", MaxNesting) + "1" + strings.Repeat("]", MaxNesting), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.src, nil)
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
