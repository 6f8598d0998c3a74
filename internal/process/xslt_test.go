package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoXslTransformDeploy checks that the stylesheet a doXslTransform
// names is compiled at deploy: a valid one loads, an invalid one refuses
// the bundle naming the BPEL line and the stylesheet's own line.
func TestDoXslTransformDeploy(t *testing.T) {
	const head = `<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">` + "\n"
	tests := []struct {
		name, xsl string
		errs      []string
	}{
		{"valid", head + `<xsl:template match="/"><r/></xsl:template></xsl:stylesheet>`, nil},
		{"unsupported instruction", head + `<xsl:import href="b.xsl"/></xsl:stylesheet>`,
			[]string{"Test.bpel:26", `invalid stylesheet "x.xsl"`, "x.xsl:2: <xsl:import>: not supported"}},
		{"bad expression", head + `<xsl:template match="/">` + "\n" + `<r><xsl:value-of select="1 +"/></r></xsl:template></xsl:stylesheet>`,
			[]string{"Test.bpel:26", `x.xsl:3: <xsl:value-of>: select "1 +"`}},
		{"not XML", `<xsl:stylesheet`, []string{"Test.bpel:26", "x.xsl", "malformed XML"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := editedBundle(t, "good-minimal", map[string][]string{
				"Test.bpel": {bpelFromPath, `<from>bpel:doXslTransform('x.xsl', $in.payload)</from>`},
			})
			if err := os.WriteFile(filepath.Join(dir, "x.xsl"), []byte(tc.xsl), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadBundle(dir)
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatalf("LoadBundle: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadBundle succeeded, want an error with %q", tc.errs)
			}
			for _, want := range tc.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}
