package xsd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beevik/etree"
)

// FuzzLoad feeds arbitrary schema documents to the loader and validates a
// fixed instance against every declaration that compiles: neither may
// panic or loop.
func FuzzLoad(f *testing.F) {
	for _, n := range []string{"po.xsd", "po-types.xsd", "common/common.xsd", "unsupported.xsd"} {
		b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(n)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema"><xsd:include schemaLocation="a.xsd"/><xsd:element name="a"/></xsd:schema>`))
	doc := etree.NewDocument()
	if err := doc.ReadFromString(`<a xmlns="urn:po" currency="USD"><b>1</b><b>x</b>text<c/></a>`); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		read := func(name string) ([]byte, error) {
			switch name {
			case "a.xsd", "b.xsd", "common/common.xsd":
				return data, nil
			}
			return nil, os.ErrNotExist
		}
		s := Load(read, []string{"a.xsd"})
		for q := range s.elements {
			if d, err := s.Element(q); err == nil {
				_ = s.Validate(d, doc.Root())
			}
		}
		for q := range s.types {
			if typ, err := s.Type(q); err == nil {
				_ = s.ValidateType(typ, doc.Root())
			}
		}
	})
}
