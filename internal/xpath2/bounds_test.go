package xpath2

import (
	"errors"
	"strings"
	"testing"
)

// TestEvaluationBounds: every place an evaluation builds a sequence or a
// string checks DynamicContext's bounds as it builds (here 10 items and
// 20 bytes) and ends with XPDY0130 naming the bound and its flag; within
// the bounds the same expressions evaluate; negative switches a bound
// off.
func TestEvaluationBounds(t *testing.T) {
	for _, tc := range []struct {
		expr     string
		xquery   bool
		want     string // in the error; "" means no error
		maxItems int
	}{
		{expr: "count(1 to 11)", want: "the range 1 to 11 builds a sequence of more than 10 items"},
		{expr: "count(1 to 10)"},
		{expr: "count(1 to 11)", maxItems: -1},
		{expr: "count(for $i in 1 to 4, $j in 1 to 3 return $j)", want: "a sequence of 12 items, over the bound of 10 items (--max-items sets it)"},
		{expr: "count(for $i in 1 to 3, $j in 1 to 3 return $j)"},
		{expr: "count(((1,2,3),(4,5,6),(7,8,9),(10,11)))", want: "a sequence of 11 items"},
		{expr: "count(for $i in (1 to 6) return ($i, $i))", want: "a sequence of 12 items"},
		{expr: "count(string-to-codepoints('abcdefghijk'))", want: "a sequence of 11 items"},
		{expr: "count(tokenize('a b c d e f g h i j k', ' '))", want: "a sequence of 11 items"},
		{expr: "concat('0123456789', '0123456789', 'x')", want: "a string of 21 bytes, over the bound of 20 bytes (--max-string-bytes sets it)"},
		{expr: "concat('0123456789', '0123456789')"},
		{expr: "string-join(('0123456789', '0123456789'), '-')", want: "a string of 21 bytes"},
		{expr: "replace('abc', 'b', '0123456789012345678901')", want: "a string of 23 bytes"},
		{expr: "codepoints-to-string(for $i in 1 to 7 return (65, 66, 67))", want: "a sequence of 12 items"},
		{expr: "count(for $i in 1 to 4, $j in 1 to 3 return $j)", xquery: true, want: "a sequence of 11 items"},
		{expr: "count(for $i in 1 to 4 order by $i return (1, 2, 3))", xquery: true, want: "a sequence of 12 items"},
		{expr: "count(for $i in 1 to 4, $j in 1 to 3 let $k := $j order by $k return 1)", xquery: true, want: "a sequence of 11 items"},
		{expr: "count(for $d in (1 to 4) return <a>{$d}</a>/(1, 2, 3))", xquery: true, want: "a sequence of 12 items"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			var (
				x   *Expr
				err error
			)
			if tc.xquery {
				x, err = CompileXQuery(tc.expr, nil)
			} else {
				x, err = Compile(tc.expr, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			items := 10
			if tc.maxItems != 0 {
				items = tc.maxItems
			}
			_, err = x.Evaluate(&DynamicContext{MaxItems: items, MaxStringBytes: 20})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			var xe *Error
			if !errors.As(err, &xe) || xe.Code != "XPDY0130" || !strings.Contains(xe.Msg, tc.want) {
				t.Fatalf("got %v, want XPDY0130 with %q", err, tc.want)
			}
		})
	}
}
