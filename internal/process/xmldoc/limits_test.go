package xmldoc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/orchd/orchd/internal/xmlparse"
)

// manyAttrs is a WSDL-like file whose second element, on line 2, carries n
// attributes and d namespace declarations.
func manyAttrs(n, d int) []byte {
	var b strings.Builder
	b.WriteString("<definitions xmlns=\"urn:wsdl\">\n<message")
	for i := range n {
		fmt.Fprintf(&b, " a%d=\"v\"", i)
	}
	for i := range d {
		fmt.Fprintf(&b, " xmlns:p%d=\"urn:p%d\"", i, i)
	}
	b.WriteString("/>\n</definitions>\n")
	return []byte(b.String())
}

func nested(depth int) []byte {
	return []byte("<a>\n" + strings.Repeat("<b>", depth-1) + strings.Repeat("</b>", depth-1) + "</a>")
}

func TestParseLimits(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		limit string // "" when the file is within the limits
		line  int
	}{
		{"attributes at the limit", manyAttrs(MaxAttrs, 0), "", 0},
		{"100,000 attributes", manyAttrs(100_000, 0), xmlparse.LimitAttrs, 2},
		{"declarations at the limit", manyAttrs(MaxAttrs, MaxNSDecls), "", 0},
		{"30,000 declarations", manyAttrs(0, 30_000), xmlparse.LimitNSDecls, 2},
		{"depth at the limit", nested(MaxDepth), "", 0},
		{"depth over the limit", nested(MaxDepth + 1), xmlparse.LimitDepth, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Parse("big.wsdl", tc.data)
			if tc.limit == "" {
				if err != nil || doc.Root == nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("Parse = %v, want a LimitError", err)
			}
			if le.Limit != tc.limit || le.Pos != (Pos{File: "big.wsdl", Line: tc.line}) {
				t.Errorf("LimitError %+v, want %s at line %d", le, tc.limit, tc.line)
			}
			if msg := err.Error(); !strings.Contains(msg, "big.wsdl:") || !strings.Contains(msg, tc.limit) {
				t.Errorf("message %q does not name the file, the line and the limit", msg)
			}
		})
	}
}

// BenchmarkParseAttrs reports the cost per attribute of a file whose one
// element has n attributes: flat, up to the limit parsed and above it
// refused, where etree alone took minutes for 100,000.
func BenchmarkParseAttrs(b *testing.B) {
	for _, n := range []int{100, 1000, 10_000, 100_000} {
		data := manyAttrs(n, 0)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				_, _ = Parse("big.wsdl", data)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/attr")
		})
	}
}
