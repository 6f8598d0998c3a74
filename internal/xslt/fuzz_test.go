package xslt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"
)

// FuzzCompile feeds arbitrary stylesheets to Compile: it must return a
// stylesheet or an error, never panic, and a stylesheet it accepts must
// run over a small document without panicking.
func FuzzCompile(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xsl")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="a[1]|@b|/|//c"><r x="{.}"/></xsl:template></xsl:stylesheet>`))
	src := etree.NewDocument()
	if err := src.ReadFromString(`<a b="1"><c>2</c><c/></a>`); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Compile("f.xsl", data)
		if err != nil {
			if s != nil {
				t.Fatal("stylesheet and error")
			}
			return
		}
		_, _ = s.Transform(src.Root(), &Options{MaxSteps: 10000})
	})
}
