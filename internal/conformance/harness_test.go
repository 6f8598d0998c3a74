package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/mgmt"
)

func TestParseProperties(t *testing.T) {
	in := "# comment\n! also a comment\\\n  key1 = value one\nkey2:v2\nkey3 v3\n" +
		"regex=.*\\\\{a\\\\}.*\n" + // \\{ in the file is \{ in the value
		"long=first \\\n    second\\\n\tthird\n" +
		"esc\\=key=tab\\tnl\\nu\\u0041x\\q\n" +
		"empty=\n" +
		"key1=replaced\r\nlatin=\xe9\n"
	p := ParseProperties([]byte(in))
	want := map[string]string{
		"key1": "replaced", "key2": "v2", "key3": "v3", "regex": `.*\{a\}.*`,
		"long": "first secondthird", "esc=key": "tab\tnl\nuAxq", "empty": "", "latin": "é",
	}
	for k, v := range want {
		if got, ok := p.Get(k); !ok || got != v {
			t.Errorf("%s = %q (%v), want %q", k, got, ok, v)
		}
	}
	if len(p.Values) != len(want) {
		t.Errorf("keys %v, want %d of them", p.Keys, len(want))
	}
	if p.Keys[0] != "key1" {
		t.Errorf("keys not in file order: %v", p.Keys)
	}
}

// The properties files, read with Java's rules, give exactly the requests
// and regexes tests.tsv transcribes, and every tsv row is planned.
func TestPlanMatchesTSV(t *testing.T) {
	root := corpusRoot(t)
	bundles, err := Plan(root)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readTSV(root)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]*Case{}
	n := 0
	for _, b := range bundles {
		for _, c := range b.Cases {
			if cases[c.ID] != nil {
				t.Errorf("duplicate case id %s", c.ID)
			}
			cases[c.ID] = c
			n++
			if c.Props != "deploy.xml" && c.Skip == "" {
				if _, err := compileJava(c.Response); err != nil {
					t.Errorf("%s: regex does not translate: %v", c.ID, err)
				}
			}
		}
	}
	if len(bundles) != 85 {
		t.Errorf("%d bundles, want 85 (MANIFEST)", len(bundles))
	}
	for _, r := range rows {
		if strings.HasPrefix(r.props, "(java)") {
			continue
		}
		c := cases[r.key()]
		if c == nil {
			t.Errorf("tests.tsv:%d: %s not planned", r.line, r.key())
			continue
		}
		if c.Request != r.request || c.Response != r.response || c.Service.String() != r.service || c.Operation != r.operation {
			t.Errorf("tests.tsv:%d: %s differs from the properties file:\n got %q %q\nwant %q %q", r.line, r.key(), c.Request, c.Response, r.request, r.response)
		}
	}
	if want := len(rows) + 2; n != want { // + the two deploy-refusal checks
		t.Errorf("%d cases planned, want %d", n, want)
	}
}

func TestNormalize(t *testing.T) {
	desc := &exchange.MessageDesc{Parts: []exchange.PartDesc{
		{Name: "TestPart", Type: exchange.QName{Local: "string"}},
		{Name: "doc", Element: exchange.QName{Space: "urn:x", Local: "doc"}},
	}}
	msg, err := toMessage(`<message xmlns:x="urn:x"><TestPart>a -> b</TestPart><doc><x:doc><x:v>1</x:v></x:doc></doc></message>`, desc)
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Part("doc").SelectAttrValue("xmlns:x", ""); got != "urn:x" {
		t.Fatalf("element part is not self-contained: xmlns:x = %q", got)
	}
	// As a decoded SOAP body part would be: an unused envelope declaration.
	msg.Part("TestPart").CreateAttr("xmlns:soapenv", "http://schemas.xmlsoap.org/soap/envelope/")
	got, err := normalize(msg, desc)
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?><message><TestPart>a -&gt; b</TestPart><doc><x:doc xmlns:x="urn:x"><x:v>1</x:v></x:doc></doc></message>`
	if got != want {
		t.Fatalf("normalize:\n got %s\nwant %s", got, want)
	}
	re, err := compileJava(`.*a -&gt; b.*`)
	if err != nil || !re.MatchString(got) {
		t.Fatalf("regex: %v", err)
	}
	if re, _ := compileJava(`a -&gt; b`); re.MatchString(got) {
		t.Fatal("a regex must match the whole answer")
	}
	if m := mismatch(`.*a -&gt; c.*`, got); !strings.Contains(m, "a -&gt; c") {
		t.Fatalf("mismatch = %q", m)
	}
}

func TestFillNow(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.Local)
	got := fillNow(`<Time>${NOW+5s:yyyy-MM-ddTHH:mm:ss.SSS local, no zone}</Time><T>${NOW-5s:x}</T>`, now)
	if want := `<Time>2024-01-01T12:00:05.000</Time><T>2024-01-01T11:59:55.000</T>`; got != want {
		t.Fatalf("got %s", got)
	}
}

// TestVersionsWrong: after the n-th deploy of TestVersionedRedeploy, n
// versions, the newest active, the others retired, one instance each;
// anything else is named.
func TestVersionsWrong(t *testing.T) {
	v := func(n int, state string, started uint64) mgmt.Process {
		return mgmt.Process{Version: n, State: state, Stats: mgmt.Stats{Started: started}}
	}
	for _, tc := range []struct {
		vs     []mgmt.Process
		newest int
		want   string
	}{
		{vs: []mgmt.Process{v(2, "active", 1), v(1, "retired", 1)}, newest: 2},
		{vs: []mgmt.Process{v(2, "active", 1), v(1, "active", 1)}, newest: 2, want: "version 1 is active, want retired"},
		{vs: []mgmt.Process{v(2, "active", 2), v(1, "retired", 1)}, newest: 2, want: "version 2 started 2 instances, want 1"},
		{vs: []mgmt.Process{v(1, "active", 1)}, newest: 2, want: "1 versions listed, want 2"},
	} {
		if got := versionsWrong(tc.vs, tc.newest); got != tc.want {
			t.Errorf("%v newest %d: got %q, want %q", tc.vs, tc.newest, got, tc.want)
		}
	}
	if got := odeBase("HelloWorld-3"); got != "HelloWorld" {
		t.Errorf("odeBase(HelloWorld-3) = %q", got)
	}
}
