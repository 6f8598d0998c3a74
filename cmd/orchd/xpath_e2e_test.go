package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var updateXPathGolden = flag.Bool("update-xpath", false, "rewrite testdata/xpath/golden.txt from the orchd xpath runs")

// TestXPathCommand runs the built binary's "orchd xpath" on the files of
// testdata/xpath and compares what it prints, and its exit code, with
// testdata/xpath/golden.txt (-update-xpath rewrites it).
func TestXPathCommand(t *testing.T) {
	const po = "--ns=po=urn:example:po"
	ctx := "--context=testdata/xpath/po.xml"
	cases := [][]string{
		// XPath 2.0 (the default): types and string values
		{ctx, po, "sum(//po:item/po:price)"},
		{ctx, po, "sum(//po:item/xs:decimal(po:price))"},
		{ctx, po, "count(//po:item) * 2"},
		{ctx, po, "xs:dateTime(/po:order/po:placed) + xs:dayTimeDuration('PT1H')"},
		{ctx, po, "/po:order/po:item/@sku"},
		{ctx, po, "/po:order/po:note"},
		{ctx, po, "//po:note/text()"},
		{ctx, po, "/"},
		{ctx, po, "//po:item[@qty > 5]"},
		{ctx, po, "for $i in //po:item return string($i/@sku), true(), 1.5e0"},
		{po, "--var=d=testdata/xpath/po.xml", "--var=who=testdata/xpath/customer.txt", "concat($who, ': ', count($d/po:order/po:item), ' items')"},
		{"--ns==urn:example:po", ctx, "string(/order/@id)"},
		// XPath 2.0 errors
		{"1 div 0"},
		{"xs:integer('x')"},
		{"'a' + 1"},
		{"fn:nope(1)"},
		{"1 +"},
		{"$undeclared"},
		{"."},
		{"--context=testdata/xpath/broken.xml", "."},
		{"--context=testdata/xpath/missing.xml", "."},
		// XPath 1.0, as XPath 1.0 processes evaluate
		{"--version=1.0", ctx, po, "sum(//po:item/po:price)"},
		{"--version=1.0", ctx, po, "/po:order/po:item/@qty"},
		{"--version=1.0", ctx, po, "/po:order/po:note"},
		{"--version=1.0", ctx, po, "1 div 0"},
		{"--version=1.0", ctx, po, "100000000000000000000 * 10"},
		{"--version=1.0", ctx, po, "count(//po:item) > 1"},
		{"--version=1.0", po, "--var=d=testdata/xpath/po.xml", "--var=who=testdata/xpath/customer.txt", "concat($who, ': ', count($d/po:item), ' items')"},
		{"--version=1.0", ctx, "matches('a', 'a')"},
		{"--version=1.0", ctx, "foo(1)"},
		{"--version=1.0", "--ns=ode=http://www.apache.org/ode/type/extension", "ode:concat('a', 'b')"},
		{"--version=1.0", "$nope"},
		// usage
		{"--version=3.0", "1"},
	}
	var got strings.Builder
	for _, args := range cases {
		cmd := exec.Command(orchdBin, append([]string{"xpath"}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		checkRaces(t, "orchd xpath "+strings.Join(args, " "), stderr.String(), err)
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&got, "$ orchd xpath %s\n%sexit %d", strings.Join(args, " "), out, code)
		if code == 2 {
			fmt.Fprintf(&got, " (usage on stderr: %t)", strings.Contains(stderr.String(), "usage: orchd xpath"))
		}
		got.WriteString("\n\n")
	}
	golden := filepath.Join("testdata", "xpath", "golden.txt")
	if *updateXPathGolden {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update-xpath)", err)
	}
	if got.String() != string(want) {
		t.Errorf("orchd xpath output differs from %s (-update-xpath rewrites it):\n%s", golden, got.String())
	}
}
