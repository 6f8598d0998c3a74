package soap

import (
	"strings"
	"testing"
)

func TestParseTreeWhitespace(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<a>\n  <b>1</b>\n  <c/>\n</a>", "<a><b>1</b><c/></a>"},
		{"<a> </a>", "<a> </a>"},
		{"<a>x <b/> y</a>", "<a>x <b/> y</a>"},
		{"<a>\n <b> 2 </b>\n</a>", "<a><b> 2 </b></a>"},
		{"<?xml version='1.0'?>\n<a/>\n", "<a/>"},
	}
	for _, tc := range tests {
		doc, err := parseTree([]byte(tc.in), Limits{})
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		var b strings.Builder
		doc.Root().WriteTo(&b, &doc.WriteSettings)
		if b.String() != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, b.String(), tc.want)
		}
	}
	for _, bad := range []string{"<a><b></a>", "<a>", "<a></b>", strings.Repeat("<a>", Limits{}.WithDefaults().MaxDepth+2)} {
		if _, err := parseTree([]byte(bad), Limits{}); err == nil {
			t.Errorf("%q: no error", bad[:min(len(bad), 20)])
		}
	}
}
