package xslt

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/xpath2"
)

var update = flag.Bool("update", false, "rewrite the golden .out files of testdata")

// TestGolden runs each testdata/NAME.xsl over testdata/NAME.xml (or
// testdata/input.xml) and compares the result with testdata/NAME.out.
// Stylesheet parameters "p" and "middle" are set to "P" and "Xsl".
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.xsl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no stylesheets: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".xsl")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(filepath.Base(f), data)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			in := "testdata/" + name + ".xml"
			if _, err := os.Stat(in); err != nil {
				in = "testdata/input.xml"
			}
			src := etree.NewDocument()
			if err := src.ReadFromFile(in); err != nil {
				t.Fatal(err)
			}
			out, err := s.Transform(src.Root(), &Options{Params: map[string]xpath2.Sequence{"p": {xpath2.Str("P")}, "middle": {xpath2.Str("Xsl")}}})
			var got string
			if err != nil {
				got = "ERROR: " + err.Error() + "\n"
			} else {
				got, err = out.WriteToString()
				if err != nil {
					t.Fatal(err)
				}
				got += "\n"
			}
			golden := "testdata/" + name + ".out"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s:\ngot  %s\nwant %s", name, got, want)
			}
		})
	}
}

// TestCompileErrors checks that what the processor does not support, or
// a malformed stylesheet, is refused naming the file, line and element.
func TestCompileErrors(t *testing.T) {
	const head = `<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">` + "\n"
	tests := []struct {
		name, body, want string
	}{
		{"import", `<xsl:import href="a.xsl"/>`, "s.xsl:2: <xsl:import>: not supported"},
		{"include", `<xsl:include href="a.xsl"/>`, "s.xsl:2: <xsl:include>: not supported"},
		{"unknown instruction", `<xsl:template match="/"><xsl:frobnicate/></xsl:template>`, "s.xsl:2: <xsl:frobnicate>: not supported"},
		{"apply-imports", `<xsl:template match="/">` + "\n" + `<xsl:apply-imports/></xsl:template>`, "s.xsl:3: <xsl:apply-imports>: not supported"},
		{"html output", `<xsl:output method="html"/>`, `s.xsl:2: <xsl:output>: output method "html" is not supported`},
		{"bad select", `<xsl:template match="/"><xsl:value-of select="1 +"/></xsl:template>`, `s.xsl:2: <xsl:value-of>: select "1 +"`},
		{"missing select", `<xsl:template match="/"><xsl:value-of/></xsl:template>`, `s.xsl:2: <xsl:value-of>: missing select attribute`},
		{"bad pattern", `<xsl:template match="a/following::b"/>`, `s.xsl:2: <xsl:template>: match pattern "a/following::b": axis "following" is not allowed`},
		{"pattern ends with slash", `<xsl:template match="a/"/>`, `pattern ends with '/'`},
		{"undeclared prefix", `<xsl:template match="q:a"/>`, `undeclared namespace prefix "q"`},
		{"no match no name", `<xsl:template/>`, "s.xsl:2: <xsl:template>: a template needs a match or a name"},
		{"bad avt", `<xsl:template match="/"><a href="{x"/></xsl:template>`, `s.xsl:2: <a>: attribute href: unterminated '{'`},
		{"number level", `<xsl:template match="/"><xsl:number level="multiple"/></xsl:template>`, `level "multiple" is not supported`},
		{"when outside choose", `<xsl:template match="/"><xsl:choose><xsl:if test="1"/></xsl:choose></xsl:template>`, "<xsl:if>: not allowed in xsl:choose"},
		{"select and content", `<xsl:variable name="v" select="1">x</xsl:variable>`, "<xsl:variable>: has both a select attribute and content"},
		{"bad priority", `<xsl:template match="a" priority="high"/>`, `priority "high" is not a number`},
		{"undefined variable", `<xsl:template match="/"><xsl:value-of select="$nope"/></xsl:template>`, `s.xsl:2: <xsl:value-of>: select "$nope"`},
		{"variable out of scope", `<xsl:template match="/"><xsl:if test="1"><xsl:variable name="v" select="1"/></xsl:if>` + "\n" + `<r a="{$v}"/></xsl:template>`, `s.xsl:3: <r>: attribute a "$v"`},
		{"param of another template", `<xsl:template name="t"><xsl:param name="p1"/></xsl:template>` + "\n" + `<xsl:template match="/"><xsl:value-of select="$p1"/></xsl:template>`, `s.xsl:3: <xsl:value-of>: select "$p1"`},
		{"namespace-alias", `<xsl:namespace-alias stylesheet-prefix="a" result-prefix="b"/>`, "<xsl:namespace-alias>: not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile("s.xsl", []byte(head+tc.body+"\n</xsl:stylesheet>"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			var ce *CompileError
			if !errors.As(err, &ce) && !strings.Contains(tc.want, "s.xsl") {
				t.Fatalf("not a CompileError: %T", err)
			}
		})
	}
	if _, err := Compile("s.xsl", []byte("<a>")); err == nil || !strings.Contains(err.Error(), "s.xsl") {
		t.Errorf("malformed: %v", err)
	}
	if _, err := Compile("s.xsl", []byte("<root/>")); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("simplified stylesheet: %v", err)
	}
}

// TestTransformElement checks the single-element result rule of
// doXslTransform and xsl:message terminate.
func TestTransformElement(t *testing.T) {
	src := etree.NewDocument()
	if err := src.ReadFromString(`<a><b>1</b><b>2</b></a>`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tmpl string
		err        error
		want       string
	}{
		{"element", `<r><xsl:value-of select="count(//b)"/></r>`, nil, `<r>2</r>`},
		{"text only", `<xsl:value-of select="count(//b)"/>`, ErrNotElement, ""},
		{"two elements", `<r/><r/>`, ErrNotElement, ""},
		{"empty", ``, ErrNotElement, ""},
		{"terminate", `<xsl:message terminate="yes">stop <xsl:value-of select="a/b[2]"/></xsl:message>`, ErrTerminated, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile("t.xsl", []byte(`<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="/">`+tc.tmpl+`</xsl:template></xsl:stylesheet>`))
			if err != nil {
				t.Fatal(err)
			}
			el, err := s.TransformElement(src.Root(), nil)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := etree.NewDocument()
			d.SetRoot(el.Copy())
			if got, _ := d.WriteToString(); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
