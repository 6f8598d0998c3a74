package soap

import (
	"strconv"
	"strings"
	"testing"
)

// manyAttrsEnvelope returns a SOAP 1.1 envelope whose body element carries
// n attributes (kind "attrs") or n namespace declarations ("xmlns"), or
// whose Body carries n namespace declarations ("xmlns-on-Body", which the
// body element inherits when it is detached).
func manyAttrsEnvelope(n int, kind string) []byte {
	var b strings.Builder
	b.WriteString(`<s:Envelope xmlns:s="` + NS11 + `"><s:Body`)
	if kind != "xmlns-on-Body" {
		b.WriteString(`><p:order xmlns:p="urn:example:po"`)
	}
	for i := range n {
		if kind != "attrs" {
			b.WriteString(` xmlns:n` + strconv.Itoa(i) + `="urn:n` + strconv.Itoa(i) + `"`)
		} else {
			b.WriteString(` a` + strconv.Itoa(i) + `="v` + strconv.Itoa(i) + `"`)
		}
	}
	if kind == "xmlns-on-Body" {
		b.WriteString(`><p:order xmlns:p="urn:example:po"`)
	}
	b.WriteString(`><p:id>1</p:id></p:order></s:Body></s:Envelope>`)
	return []byte(b.String())
}

// BenchmarkManyAttributes decodes an envelope whose body element carries
// many attributes or namespace declarations, reporting the cost per
// attribute: flat from 100 to 100,000 when decoding is linear.
func BenchmarkManyAttributes(b *testing.B) {
	for _, kind := range []string{"attrs", "xmlns", "xmlns-on-Body"} {
		for _, n := range []int{100, 1000, 10000, 100000} {
			data := manyAttrsEnvelope(n, kind)
			b.Run(kind+"="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := benchDecode(data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/attr")
			})
		}
	}
}

// benchDecode decodes an envelope with no attribute or declaration limit.
func benchDecode(data []byte) error {
	_, err := decodeEnvelopeBytes(data, Limits{MaxAttrs: -1, MaxNSDecls: -1})
	return err
}
