package xmlparse

import "github.com/beevik/etree"

// WriteSettings are the settings orchd serializes XML with, so that what a
// conforming parser (Parse, or a partner's) reads back is what was
// written: a carriage return is written as &#xD; in text and attribute
// values (a raw one reads back as a line feed), and a tab or line feed in
// an attribute value as a character reference (a raw one reads back as a
// space under attribute-value normalization). Text escapes &, < and >;
// attribute values &, < and ".
//
// Documents Parse returns carry these settings; a document made with
// etree.NewDocument must be given them before it is written.
func WriteSettings() etree.WriteSettings {
	return etree.WriteSettings{CanonicalText: true, CanonicalAttrVal: true}
}

// NewDocument returns an empty document that writes with WriteSettings.
func NewDocument() *etree.Document {
	doc := etree.NewDocument()
	doc.WriteSettings = WriteSettings()
	return doc
}
