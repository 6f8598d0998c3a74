package xsd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

func dirReader(dir string) Reader {
	return func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))) }
}

func loadTestdata(t *testing.T, files ...string) *Set {
	t.Helper()
	s := Load(dirReader("testdata"), files)
	if p := s.Problems(); len(p) > 0 {
		t.Fatalf("load problems: %v", p)
	}
	return s
}

func parse(t *testing.T, doc string) *etree.Element {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromString(doc); err != nil {
		t.Fatalf("instance: %v", err)
	}
	return d.Root()
}

const po = `xmlns:po="urn:po"`

func TestValidateElement(t *testing.T) {
	s := loadTestdata(t, "service.wsdl")
	order := func(items, rest string) string {
		return `<po:order ` + po + ` currency="USD"><po:customer>ACME</po:customer>` + items + rest + `</po:order>`
	}
	item := func(sku, qty, price string) string {
		return `<po:item><po:sku>` + sku + `</po:sku><po:qty>` + qty + `</po:qty><po:price>` + price + `</po:price></po:item>`
	}
	good := item("ABC-1234", "2", "10.50")
	dates := `<po:ordered>2024-05-01</po:ordered>`
	tests := []struct {
		name, elem, doc string
		want            string // "" for valid, else the whole message
	}{
		{"valid order", "urn:po order", order(good+item("XYZ-0001", "100", "0"), `<po:note>rush</po:note>`+dates), ""},
		{"valid with due and extra ns attribute", "urn:po order", strings.Replace(order(good, dates+`<po:due>2024-05-02T10:00:00Z</po:due>`), `currency="USD"`, `currency=" EUR " xmlns:x="urn:x" x:foo="1" by="clerk"`, 1), ""},
		{"qty below minInclusive", "urn:po order", order(good+item("ABC-0002", "-3", "1"), dates), "/po:order/po:item[2]/po:qty: '-3' is below minInclusive 1"},
		{"qty above maxInclusive", "urn:po order", order(item("ABC-0002", "101", "1"), dates), "/po:order/po:item/po:qty: '101' is above maxInclusive 100"},
		{"qty not an integer", "urn:po order", order(item("ABC-0002", "2.5", "1"), dates), "/po:order/po:item/po:qty: '2.5' is not a valid xsd:integer"},
		{"sku pattern", "urn:po order", order(item("abc-1234", "1", "1"), dates), `/po:order/po:item/po:sku: 'abc-1234' does not match pattern [A-Z]{3}-\d{4}`},
		{"price fractionDigits", "urn:po order", order(item("ABC-1234", "1", "1.005"), dates), "/po:order/po:item/po:price: '1.005' has 3 fraction digits, more than fractionDigits 2"},
		{"price totalDigits", "urn:po order", order(item("ABC-1234", "1", "123456.78"), dates), "/po:order/po:item/po:price: '123456.78' has 8 digits, more than totalDigits 7"},
		{"price negative", "urn:po order", order(item("ABC-1234", "1", "-1"), dates), "/po:order/po:item/po:price: '-1' is below minInclusive 0"},
		{"simpleContent attribute enum", "urn:po order", order(strings.Replace(good, "<po:price>", `<po:price currency="GBP">`, 1), dates), "/po:order/po:item/po:price/@currency: 'GBP' is not one of the enumerated values USD, EUR"},
		{"boolean attribute", "urn:po order", order(strings.Replace(good, "<po:item>", `<po:item gift="yes">`, 1), dates), "/po:order/po:item/@gift: 'yes' is not a valid xsd:boolean"},
		{"missing required attribute", "urn:po order", strings.Replace(order(good, dates), ` currency="USD"`, "", 1), "/po:order: missing required attribute currency"},
		{"unknown attribute", "urn:po order", strings.Replace(order(good, dates), `currency="USD"`, `currency="USD" color="red"`, 1), "/po:order/@color: attribute is not allowed"},
		{"lax anyAttribute with a global declaration", "urn:po order", strings.Replace(order(good, dates), `currency="USD"`, `currency="USD" xmlns:c="urn:common" c:trace="70000"`, 1), "/po:order/@c:trace: '70000' is not a valid xsd:unsignedShort (out of range)"},
		{"attribute in another namespace without a wildcard (XSD 1.0 3.4.4 cl. 3.2)", "urn:po order", order(strings.Replace(good, "<po:item>", `<po:item xmlns:x="urn:x" x:foo="1">`, 1), dates), "/po:order/po:item/@x:foo: attribute is not allowed"},
		{"xsi:schemaLocation is allowed everywhere", "urn:po order", order(strings.Replace(good, "<po:item>", `<po:item xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:po po.xsd">`, 1), dates), ""},
		{"other xsi attributes are not", "urn:po order", order(strings.Replace(good, "<po:item>", `<po:item xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:foo="1">`, 1), dates), "/po:order/po:item/@xsi:foo: attribute is not allowed"},
		{"attribute group", "urn:po order", strings.Replace(order(good, dates), `currency="USD"`, `currency="USD" by="1clerk"`, 1), "/po:order/@by: '1clerk' is not a valid xsd:NCName"},
		{"missing item", "urn:po order", order("", dates), "/po:order/po:ordered: element is not allowed here; expected po:item"},
		{"missing group element", "urn:po order", order(good, ""), "/po:order: missing element po:item or po:note or po:ordered"},
		{"element out of order", "urn:po order", order(good, dates+`<po:note>late</po:note>`), "/po:order/po:note: element is not allowed here; expected po:due"},
		{"unexpected element names what was expected", "urn:po order", order(good, `<po:shipped/>`+dates), "/po:order/po:shipped: element is not allowed here; expected po:item or po:note or po:ordered"},
		{"unqualified child", "urn:po order", `<po:order ` + po + ` currency="USD"><customer>ACME</customer></po:order>`, "/po:order/customer: element is not allowed here; expected po:customer"},
		{"bad date", "urn:po order", order(good, `<po:ordered>2024-02-30</po:ordered>`), "/po:order/po:ordered: '2024-02-30' is not a valid xsd:date"},
		{"bad dateTime", "urn:po order", order(good, dates+`<po:due>2024-05-02 10:00</po:due>`), "/po:order/po:due: '2024-05-02 10:00' is not a valid xsd:dateTime"},
		{"text in element-only content", "urn:po order", order(good, dates+"stray"), "/po:order: text 'stray' is not allowed in element-only content"},
		{"child in simple content", "urn:po order", order(strings.Replace(good, "<po:sku>ABC-1234", "<po:sku><b/>", 1), dates), "/po:order/po:item/po:sku: element b is not allowed: the content is a simple value"},
		{"nillable nil", "urn:po note", `<po:note ` + po + ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/>`, ""},
		{"nil with content", "urn:po note", `<po:note ` + po + ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true">x</po:note>`, `/po:note: an element with xsi:nil="true" must be empty`},
		{"nil not nillable", "urn:po code", `<po:code ` + po + ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/>`, "/po:code: xsi:nil on an element that is not nillable"},
		{"wrong root", "urn:po order", `<po:orders ` + po + `/>`, "/po:orders: element is {urn:po}orders, want {urn:po}order"},
		{"wsdl inline schema with ref", "urn:svc submit", `<s:submit xmlns:s="urn:svc">` + order(good, dates) + `<priority>7</priority></s:submit>`, ""},
		{"wsdl inline schema unqualified local", "urn:svc submit", `<s:submit xmlns:s="urn:svc">` + order(good, dates) + `<priority>300</priority></s:submit>`, "/s:submit/priority: '300' is not a valid xsd:byte (out of range)"},
		{"extension valid", "urn:po usAddress", `<po:usAddress ` + po + ` country="US"><po:street>1 Main</po:street><po:city>X</po:city><po:zip>12345-6789</po:zip></po:usAddress>`, ""},
		{"extension base part missing", "urn:po usAddress", `<po:usAddress ` + po + `><po:city>X</po:city><po:zip>12345</po:zip></po:usAddress>`, "/po:usAddress/po:city: element is not allowed here; expected po:street"},
		{"extension own part", "urn:po usAddress", `<po:usAddress ` + po + `><po:street>1</po:street><po:city>X</po:city><po:zip>1234</po:zip></po:usAddress>`, `/po:usAddress/po:zip: '1234' does not match pattern \d{5}(-\d{4})?`},
		{"fixed attribute", "urn:po usAddress", `<po:usAddress ` + po + ` country="FR"><po:street>1</po:street><po:city>X</po:city><po:zip>12345</po:zip></po:usAddress>`, "/po:usAddress/@country: 'FR' is not the fixed value 'US'"},
		{"restriction", "urn:po city", `<po:city ` + po + `><po:street>1</po:street><po:city>X</po:city></po:city>`, "/po:city/po:street: element is not allowed here; expected po:city"},
		{"xsi:type extension", "urn:po address", `<po:address ` + po + ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="po:USAddress"><po:street>1</po:street><po:city>X</po:city></po:address>`, "/po:address: missing element po:zip"},
		{"all any order", "urn:po contact", `<po:contact ` + po + `><po:phone>1</po:phone><po:name>n</po:name></po:contact>`, ""},
		{"all missing", "urn:po contact", `<po:contact ` + po + `><po:email>e</po:email><po:name>n</po:name></po:contact>`, "/po:contact: missing element po:phone"},
		{"all twice", "urn:po contact", `<po:contact ` + po + `><po:name>n</po:name><po:name>n</po:name><po:phone>1</po:phone></po:contact>`, "/po:contact/po:name[2]: element is not allowed here; expected po:phone"},
		{"choice repeated", "urn:po payment", `<po:payment ` + po + `><po:iban>1</po:iban><po:card>2</po:card></po:payment>`, ""},
		{"choice too many", "urn:po payment", `<po:payment ` + po + `><po:iban>1</po:iban><po:card>2</po:card><po:card>3</po:card></po:payment>`, "/po:payment/po:card[2]: element is not allowed here (no more elements may follow)"},
		{"choice empty", "urn:po payment", `<po:payment ` + po + `/>`, "/po:payment: missing element po:card or po:iban"},
		{"any lax unknown and skip", "urn:po envelope", `<po:envelope ` + po + `><po:head>h</po:head><x:a xmlns:x="urn:x"><x:b/></x:a><k:z xmlns:k="urn:skip">anything</k:z></po:envelope>`, ""},
		{"any lax known is validated", "urn:po envelope", `<po:envelope ` + po + `><po:head>h</po:head><c:tip xmlns:c="urn:common">11</c:tip></po:envelope>`, "/po:envelope/c:tip: '11' is above maxInclusive 10"},
		{"any ##other refuses own ns", "urn:po envelope", `<po:envelope ` + po + `><po:head>h</po:head><po:head>h</po:head></po:envelope>`, "/po:envelope/po:head[2]: element is not allowed here; expected any element"},
		{"strict any unknown", "urn:po strictBox", `<po:strictBox ` + po + `><c:nope xmlns:c="urn:common"/></po:strictBox>`, "/po:strictBox/c:nope: no global declaration of {urn:common}nope for the strict wildcard"},
		{"strict any known", "urn:po strictBox", `<po:strictBox ` + po + `><c:stamp xmlns:c="urn:common">s</c:stamp></po:strictBox>`, ""},
		{"list valid", "urn:po numbers", `<po:numbers ` + po + `> 1  2 3 </po:numbers>`, ""},
		{"list item", "urn:po numbers", `<po:numbers ` + po + `>1 x</po:numbers>`, "/po:numbers: list item 'x' is not a valid xsd:int"},
		{"list length", "urn:po numbers", `<po:numbers ` + po + `>1 2 3 4</po:numbers>`, "/po:numbers: '1 2 3 4' is longer than maxLength 3 (length 4)"},
		{"union first member", "urn:po limit", `<po:limit ` + po + `>5</po:limit>`, ""},
		{"union second member", "urn:po limit", `<po:limit ` + po + `>unbounded</po:limit>`, ""},
		{"union none", "urn:po limit", `<po:limit ` + po + `>-1</po:limit>`, "/po:limit: '-1' is valid for no member type of the union"},
		{"minLength", "urn:po code", `<po:code ` + po + `>A</po:code>`, "/po:code: 'A' is shorter than minLength 2 (length 1)"},
		{"maxLength counts characters", "urn:po code", `<po:code ` + po + `>ÄÖÜß</po:code>`, ""},
		{"minExclusive", "urn:po ratio", `<po:ratio ` + po + `>0</po:ratio>`, "/po:ratio: '0' is not above minExclusive 0"},
		{"maxExclusive", "urn:po ratio", `<po:ratio ` + po + `>1e0</po:ratio>`, "/po:ratio: '1e0' is not below maxExclusive 1"},
		{"date minInclusive", "urn:po window", `<po:window ` + po + `>2023-12-31</po:window>`, "/po:window: '2023-12-31' is below minInclusive 2024-01-01"},
		{"anyType anything", "urn:po anything", `<po:anything ` + po + ` a="1">t<x/></po:anything>`, ""},
		{"empty content", "urn:po empty", `<po:empty ` + po + `><x/></po:empty>`, "/po:empty/x: element is not allowed: the content must be empty"},
		{"mixed", "urn:po mixedText", `<po:mixedText ` + po + `>a<po:b>b</po:b>c</po:mixedText>`, ""},
		{"simpleContent restriction", "urn:common tip", `<c:tip xmlns:c="urn:common" currency="EUR">9.99</c:tip>`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, local, _ := strings.Cut(tc.elem, " ")
			d, err := s.Element(QName{sp, local})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Validate(d, parse(t, tc.doc))
			got := ""
			if err != nil {
				got = err.Error()
				var ve *Error
				if !errors.As(err, &ve) {
					t.Errorf("error %T is not an *Error", err)
				}
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestValidateType(t *testing.T) {
	s := loadTestdata(t, "po.xsd")
	tests := []struct {
		typ, doc, want string
	}{
		{NS + " int", `<v>42</v>`, ""},
		{NS + " int", `<v>2147483648</v>`, "'2147483648' is not a valid xsd:int (out of range)"},
		{NS + " positiveInteger", `<v>0</v>`, "'0' is not a valid xsd:positiveInteger (out of range)"},
		{NS + " unsignedByte", `<v> 255 </v>`, ""},
		{NS + " decimal", `<v>-.5</v>`, ""},
		{NS + " decimal", `<v>1e3</v>`, "'1e3' is not a valid xsd:decimal"},
		{NS + " double", `<v>-INF</v>`, ""},
		{NS + " float", `<v>1.5E3</v>`, ""},
		{NS + " float", `<v>abc</v>`, "'abc' is not a valid xsd:float"},
		{NS + " boolean", `<v>1</v>`, ""},
		{NS + " duration", `<v>P1Y2M3DT4H5M6.5S</v>`, ""},
		{NS + " duration", `<v>PT</v>`, "'PT' is not a valid xsd:duration"},
		{NS + " time", `<v>24:00:00</v>`, ""},
		{NS + " time", `<v>24:00:01</v>`, "'24:00:01' is not a valid xsd:time"},
		{NS + " dateTime", `<v>2024-02-29T23:59:59.123+14:00</v>`, ""},
		{NS + " dateTime", `<v>2023-02-29T00:00:00</v>`, "'2023-02-29T00:00:00' is not a valid xsd:dateTime"},
		{NS + " gYearMonth", `<v>2024-13</v>`, "'2024-13' is not a valid xsd:gYearMonth"},
		{NS + " gMonthDay", `<v>--02-29</v>`, ""},
		{NS + " hexBinary", `<v>0fA9</v>`, ""},
		{NS + " hexBinary", `<v>0fA</v>`, "'0fA' is not a valid xsd:hexBinary"},
		{NS + " base64Binary", `<v>aGVs bG8=</v>`, ""},
		{NS + " base64Binary", `<v>a===</v>`, "'a===' is not a valid xsd:base64Binary"},
		{NS + " QName", `<v xmlns:p="urn:p">p:x</v>`, ""},
		{NS + " QName", `<v>q:x</v>`, `'q:x' is not a valid xsd:QName (prefix "q" is not declared)`},
		{NS + " anyURI", `<v>http://example.com/a b</v>`, ""},
		{NS + " language", `<v>en-GB</v>`, ""},
		{NS + " NMTOKENS", `<v></v>`, "'' is shorter than minLength 1 (length 0)"},
		{NS + " string", `<v><x/></v>`, "element x is not allowed: the content is a simple value"},
		{"urn:po Zip", `<v>12345</v>`, ""},
		{"urn:po ItemType", `<v><po:sku ` + po + `>ABC-1234</po:sku></v>`, "missing element {urn:po}qty"},
		{"urn:common Currency", `<v>GBP</v>`, "'GBP' is not one of the enumerated values USD, EUR"},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+tc.doc, func(t *testing.T) {
			sp, local, _ := strings.Cut(tc.typ, " ")
			typ, err := s.Type(QName{sp, local})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if err := s.ValidateType(typ, parse(t, tc.doc)); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestUnsupportedOnlyWhenReached(t *testing.T) {
	s := loadTestdata(t, "unsupported.xsd")
	tests := []struct {
		elem string
		want string // "" when supported
	}{
		{"fine", ""},
		{"head", ""},
		{"member", ""},
		{"usesHead", "unsupported.xsd:8: <xsd:element>: not supported: substitution group (head {urn:u}head)"},
		{"keyed", "unsupported.xsd:11: <xsd:unique>: not supported: identity constraint <xsd:unique>"},
		{"redefine", ""},
		{"redone", "unsupported.xsd:4: <xsd:simpleType>: not supported: xsd:redefine"},
		{"block", `unsupported.xsd:15: <xsd:pattern>: pattern "\\p{IsBasicLatin}+": not supported: Unicode block escape \p{IsBasicLatin}`},
	}
	for _, tc := range tests {
		_, err := s.Element(QName{"urn:u", tc.elem})
		if tc.elem == "redefine" {
			if !errors.Is(err, ErrUndeclared) {
				t.Errorf("redefine: %v, want ErrUndeclared", err)
			}
			continue
		}
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %v is not ErrUnsupported", tc.elem, err)
			}
		}
		if got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.elem, got, tc.want)
		}
	}
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"missing include", map[string]string{"a.xsd": `<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema"><xsd:include schemaLocation="b.xsd"/></xsd:schema>`},
			"a.xsd:1: cannot read schema b.xsd"},
		{"malformed", map[string]string{"a.xsd": `<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">`}, "a.xsd"},
		{"not a schema", map[string]string{"a.xsd": `<foo/>`}, "a.xsd:1: not a schema: root element is {}foo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := func(n string) ([]byte, error) {
				if b, ok := tc.files[n]; ok {
					return []byte(b), nil
				}
				return nil, os.ErrNotExist
			}
			s := Load(read, []string{"a.xsd"})
			if len(s.Problems()) == 0 || !strings.Contains(s.Problems()[0].Error(), tc.want) {
				t.Fatalf("problems %v, want one containing %q", s.Problems(), tc.want)
			}
			if _, err := s.Element(QName{"", "x"}); err == nil || !strings.Contains(err.Error(), "did not load") {
				t.Errorf("Element of an undeclared name: %v, want a mention of the files that did not load", err)
			}
		})
	}
}

func TestSchemaErrors(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`<xsd:element name="e" type="xsd:nope"/>`, "a.xsd:2: <xsd:element>: unknown type {http://www.w3.org/2001/XMLSchema}nope"},
		{`<xsd:element name="e"><xsd:complexType><xsd:sequence><xsd:element ref="missing"/></xsd:sequence></xsd:complexType></xsd:element>`, "a.xsd:2: <xsd:element>: unknown element missing"},
		{`<xsd:element name="e"><xsd:complexType><xsd:sequence maxOccurs="x"/></xsd:complexType></xsd:element>`, `a.xsd:2: <xsd:sequence>: maxOccurs "x" is not a non-negative integer or unbounded`},
		{`<xsd:element name="e"><xsd:simpleType><xsd:restriction base="xsd:string"><xsd:minInclusive value="a"/></xsd:restriction></xsd:simpleType></xsd:element>`, "a.xsd:2: <xsd:minInclusive>: not supported: facet minInclusive on a xsd:string value"},
		{`<xsd:element name="e"><xsd:simpleType><xsd:restriction base="xsd:int"><xsd:maxInclusive value="x"/></xsd:restriction></xsd:simpleType></xsd:element>`, "a.xsd:2: <xsd:maxInclusive>: maxInclusive value: 'x' is not a valid xsd:int"},
		{`<xsd:element name="e"><xsd:simpleType><xsd:restriction base="xsd:string"><xsd:pattern value="[a-[b]]"/></xsd:restriction></xsd:simpleType></xsd:element>`, "character class subtraction"},
		{`<xsd:element name="e" type="T"/><xsd:complexType name="T"><xsd:complexContent><xsd:extension base="T"/></xsd:complexContent></xsd:complexType>`, "derived from itself"},
	}
	for _, tc := range tests {
		src := "<xsd:schema xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\">\n" + tc.schema + "\n</xsd:schema>"
		s := Load(func(string) ([]byte, error) { return []byte(src), nil }, []string{"a.xsd"})
		_, err := s.Element(QName{"", "e"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\nerror %v\nwant  %q", tc.schema, err, tc.want)
		}
	}
}

func TestTranslateRegexp(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		nomatch []string
	}{
		{`[A-Z]{3}-\d{4}`, []string{"ABC-1234"}, []string{"ABC-12345", "xABC-1234"}},
		{`a^b$c`, []string{"a^b$c"}, []string{"abc"}},
		{`\i\c*`, []string{"_a-1", "name"}, []string{"1a"}},
		{`[\i-[:]]`, nil, nil}, // subtraction: refused below
		{`.`, []string{"x"}, []string{"\n"}},
		{`\p{Lu}\P{Lu}`, []string{"Ab"}, []string{"AB"}},
		{`[^\s]+`, []string{"abc"}, []string{"a b"}},
		{`(ab)+|c`, []string{"abab", "c"}, []string{"abc"}},
	}
	for _, tc := range tests {
		re, err := translateRegexp(tc.pattern)
		if tc.pattern == `[\i-[:]]` {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %v, want ErrUnsupported", tc.pattern, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.pattern, err)
			continue
		}
		for _, m := range tc.match {
			if !re.MatchString(m) {
				t.Errorf("%s does not match %q", tc.pattern, m)
			}
		}
		for _, m := range tc.nomatch {
			if re.MatchString(m) {
				t.Errorf("%s matches %q", tc.pattern, m)
			}
		}
	}
}
