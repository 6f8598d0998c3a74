package xpath2

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
)

var updatePassing = flag.Bool("update", false, "rewrite testdata/passing.txt with the W3C cases that pass")

// suiteDir is the W3C XPath 2.0 case folder, the repository's
// testdata/xpath2-cases (XPATH2_SUITE overrides it).
func suiteDir() string {
	if d := os.Getenv("XPATH2_SUITE"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "testdata", "xpath2-cases")
}

type w3cCase struct {
	area, set, name, expr, ctxFile, vars, ns, baseURI, kind, expected, errCode string
}

func unescapeCell(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func loadCases(t testing.TB, dir string) []w3cCase {
	f, err := os.Open(filepath.Join(dir, "cases.tsv"))
	if err != nil {
		// The cases are part of the repository: missing ones are a
		// failure, never a skip.
		t.Fatalf("W3C XPath 2.0 cases not readable (testdata/xpath2-cases, or XPATH2_SUITE): %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []w3cCase
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 13 {
			t.Fatalf("cases.tsv: %d cells in %q", len(c), sc.Text())
		}
		for i := range c {
			c[i] = unescapeCell(c[i])
		}
		out = append(out, w3cCase{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type docCache struct {
	dir string
	mu  sync.Mutex
	m   map[string]Node
}

func (d *docCache) get(rel string) (Node, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n, ok := d.m[rel]; ok {
		return n, nil
	}
	b, err := os.ReadFile(filepath.Join(d.dir, rel))
	if err != nil {
		return nil, err
	}
	b = []byte(strings.TrimPrefix(string(b), "\ufeff"))
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = true
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, fmt.Errorf("parse %s: %w", rel, err)
	}
	n := NewDocument(doc)
	d.m[rel] = n
	return n, nil
}

// runCase evaluates one case through Query, the code "orchd xpath"
// runs; it returns whether it passed and a note.
func runCase(c w3cCase, docs *docCache, tz int) (bool, string) {
	q := &Query{Expr: c.expr, Namespaces: map[string]string{}, BaseURI: c.baseURI, ImplicitTimezone: tz, Vars: map[string]Sequence{}}
	if q.BaseURI == "" {
		q.BaseURI = "https://github.com/w3c/qt3tests/blob/master/" + c.set + ".xml"
	}
	for _, p := range strings.Fields(c.ns) {
		k, v, _ := strings.Cut(p, "=")
		q.Namespaces[k] = v
	}
	for _, p := range strings.Fields(c.vars) {
		k, v, _ := strings.Cut(p, "=")
		n, err := docs.get(v)
		if err != nil {
			return false, err.Error()
		}
		q.Vars[k] = Sequence{n}
	}
	if c.ctxFile != "" {
		n, err := docs.get(c.ctxFile)
		if err != nil {
			return false, err.Error()
		}
		q.Context = n
	}
	res, err := q.Evaluate()
	kind := c.kind
	if kind == "assert-string-value+normalize-space" {
		return checkAssertion(map[string]any{"kind": "assert-string-value", "value": c.expected, "normalize-space": true}, res, err, tz)
	}
	a := map[string]any{"kind": kind, "value": c.expected, "code": c.errCode}
	if kind == "all-of" || kind == "any-of" || kind == "not" {
		var items []any
		if jerr := json.Unmarshal([]byte(c.expected), &items); jerr != nil {
			return false, "bad JSON: " + jerr.Error()
		}
		a["items"] = items
	}
	return checkAssertion(a, res, err, tz)
}

func evalExpected(src string, tz int, result Sequence) (Sequence, error) {
	sc := &StaticContext{Variables: func(ns, local string) bool { return local == "result" }}
	e, err := Compile(src, sc)
	if err != nil {
		return nil, err
	}
	return e.Evaluate(&DynamicContext{ImplicitTimezone: tz, Variables: func(ns, local string) (Sequence, bool) { return result, true }})
}

func checkAssertion(a map[string]any, res Sequence, err error, tz int) (bool, string) {
	kind, _ := a["kind"].(string)
	val, _ := a["value"].(string)
	if kind == "error" {
		if err == nil {
			return false, "expected error " + fmt.Sprint(a["code"]) + ", got a result"
		}
		if code := ErrorCode(err); code != "err:"+fmt.Sprint(a["code"]) && a["code"] != "*" {
			return false, wrongCodeNote + code + " want err:" + fmt.Sprint(a["code"])
		}
		return true, ""
	}
	if kind == "any-of" || kind == "all-of" || kind == "not" {
		items, _ := a["items"].([]any)
		notes := []string{}
		for _, it := range items {
			m, _ := it.(map[string]any)
			ok, note := checkAssertion(m, res, err, tz)
			if note != "" {
				notes = append(notes, note)
			}
			switch {
			case kind == "any-of" && ok:
				return true, ""
			case kind == "all-of" && !ok:
				return false, note
			case kind == "not":
				return !ok, note
			}
		}
		return kind == "all-of", strings.Join(notes, "; ")
	}
	if err != nil {
		return false, "error: " + err.Error()
	}
	switch kind {
	case "assert-true", "assert-false":
		if len(res) == 1 {
			if b, ok := res[0].(Boolean); ok && bool(b) == (kind == "assert-true") {
				return true, ""
			}
		}
		return false, "got " + showSeq(res)
	case "assert-empty":
		return len(res) == 0, "got " + showSeq(res)
	case "assert-count":
		return fmt.Sprint(len(res)) == strings.TrimSpace(val), "got " + showSeq(res)
	case "assert-eq":
		exp, eerr := evalExpected(val, tz, nil)
		if eerr != nil || len(exp) != 1 || len(res) != 1 {
			return false, fmt.Sprintf("got %s want %s (%v)", showSeq(res), val, eerr)
		}
		r, ok := res[0].(Atomic)
		if !ok {
			return false, "got a node"
		}
		e := exp[0].(Atomic)
		if r.Type() == TUntypedAtomic {
			if v, err := castAtomic(r, e.Type().prim, nil); err == nil {
				r = v
			}
		}
		if isNaN(r) && isNaN(e) {
			return true, ""
		}
		okEq, cerr := valueCompare("eq", r, e, tz)
		return cerr == nil && okEq, fmt.Sprintf("got %s want %s", showSeq(res), val)
	case "assert-deep-eq":
		exp, eerr := evalExpected(val, tz, nil)
		if eerr != nil {
			return false, "expected: " + eerr.Error()
		}
		return deepEqual(res, exp, tz), fmt.Sprintf("got %s want %s", showSeq(res), val)
	case "assert-permutation":
		exp, eerr := evalExpected(val, tz, nil)
		if eerr != nil || len(exp) != len(res) {
			return false, fmt.Sprintf("got %s want %s", showSeq(res), val)
		}
		used := make([]bool, len(res))
	outer:
		for _, x := range exp {
			for i, y := range res {
				if !used[i] && deepEqual(Sequence{x}, Sequence{y}, tz) {
					used[i] = true
					continue outer
				}
			}
			return false, fmt.Sprintf("got %s want %s", showSeq(res), val)
		}
		return true, ""
	case "assert-string-value":
		// The string values as "orchd xpath" prints them.
		parts := make([]string, len(res))
		for i, it := range res {
			_, v, _ := strings.Cut(FormatItem(it), "\t")
			parts[i] = unescapeCell(v)
		}
		got := strings.Join(parts, " ")
		want := val
		if ns, _ := a["normalize-space"].(bool); ns {
			got, want = collapse(got), collapse(want)
		}
		return got == want, fmt.Sprintf("got %q want %q", got, want)
	case "assert-type":
		r, eerr := evalExpected("$result instance of "+val, tz, res)
		if eerr != nil {
			return false, eerr.Error()
		}
		return len(r) == 1 && r[0] == Boolean(true), "got " + showSeq(res) + " not " + val
	case "assert":
		r, eerr := evalExpected(val, tz, res)
		if eerr != nil {
			return false, eerr.Error()
		}
		b, _ := ebv(r)
		return b, "got " + showSeq(res)
	case "assert-xml":
		got := serializeSeq(res)
		return normXML(got) == normXML(val), fmt.Sprintf("got %q want %q", got, val)
	}
	return false, "unknown assertion " + kind
}

func normXML(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.ReplaceAll(s, "\"", "'"), "><", "> <")), " ")
}

func serializeSeq(s Sequence) string {
	var b strings.Builder
	for _, it := range s {
		if n, ok := it.(etreeNode); ok && n.attr < 0 {
			if e, ok := n.tok.(*etree.Element); ok {
				doc := etree.NewDocument()
				doc.SetRoot(e.Copy())
				str, _ := doc.WriteToString()
				b.WriteString(str)
				continue
			}
			if t, ok := n.tok.(*etree.CharData); ok {
				b.WriteString(t.Data)
				continue
			}
		}
		if n, ok := it.(Node); ok {
			b.WriteString(n.StringValue())
		} else {
			b.WriteString(it.(Atomic).String())
		}
	}
	return b.String()
}

func showSeq(s Sequence) string {
	parts := make([]string, len(s))
	for i, it := range s {
		if n, ok := it.(Node); ok {
			parts[i] = fmt.Sprintf("node(%d %s)", n.Kind(), n.LocalName())
		} else {
			a := it.(Atomic)
			parts[i] = fmt.Sprintf("%s(%q)", a.Type(), a.String())
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// wrongCodeNote starts the note of a case that raised an error, as
// expected, but not the expected one: a failure (the code is what a
// caller of orchd xpath or a fault handler sees).
const wrongCodeNote = "wrong code: "

// wrongCodeFile lists the cases known to fail only on their error code,
// each with the reason: the expected failures, kept apart from the
// passes so that the pass count is honest.
var wrongCodeFile = filepath.Join("testdata", "wrong-code.txt")

// checkWrongCodes compares the cases that failed only on their error code
// with wrongCodeFile (name, tab, reason a line; # comments): an unlisted
// one is a failure, a listed one that now passes or fails otherwise is
// reported, to be moved.
func checkWrongCodes(t *testing.T, cases []w3cCase, results []caseResult, wrong []string) {
	t.Helper()
	b, err := os.ReadFile(wrongCodeFile)
	if err != nil {
		t.Fatalf("read %s: %v", wrongCodeFile, err)
	}
	listed := map[string]bool{}
	for n, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, reason, ok := strings.Cut(l, "\t")
		if !ok || strings.TrimSpace(reason) == "" {
			t.Errorf("%s:%d: want a case name, a tab and the reason", wrongCodeFile, n+1)
		}
		listed[name] = true
	}
	byName := map[string]int{}
	for i, c := range cases {
		byName[c.name] = i
	}
	for _, n := range wrong {
		if !listed[n] {
			i := byName[n]
			t.Errorf("%s (%s) raises the wrong error code: %s", n, cases[i].expr, results[i].note)
		}
		delete(listed, n)
	}
	for n := range listed {
		if i, ok := byName[n]; ok && *updatePassing {
			continue
		} else if ok {
			t.Logf("%s, listed in %s, no longer fails only on its code (pass: %v, %s): update the list", n, wrongCodeFile, results[i].pass, results[i].note)
		}
	}
}

type caseResult struct {
	pass bool
	note string
}

func runWithTimeout(c w3cCase, docs *docCache, tz int) (r caseResult) {
	done := make(chan caseResult, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- caseResult{false, fmt.Sprintf("panic: %v", p)}
			}
		}()
		ok, note := runCase(c, docs, tz)
		done <- caseResult{ok, note}
	}()
	select {
	case r = <-done:
		return r
	case <-time.After(60 * time.Second):
		return caseResult{false, "timeout"}
	}
}

// TestW3C runs the W3C QT3 XPath 2.0 cases, twice (implicit timezone Z
// and -05:00), reports pass rates by area and fails on a regression
// against testdata/passing.txt. -update rewrites that list.
func TestW3C(t *testing.T) {
	dir := suiteDir()
	cases := loadCases(t, dir)
	docs := &docCache{dir: dir, m: map[string]Node{}}
	results := make([]caseResult, len(cases))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := runWithTimeout(c, docs, 0)
			if r.pass {
				if r2 := runWithTimeout(c, docs, -300); !r2.pass {
					r = caseResult{false, "with timezone -05:00: " + r2.note}
				}
			}
			results[i] = r
		}()
	}
	wg.Wait()
	type tally struct{ pass, total int }
	byArea := map[string]*tally{}
	var passing, wrongCode []string
	for i, c := range cases {
		tl := byArea[c.area]
		if tl == nil {
			tl = &tally{}
			byArea[c.area] = tl
		}
		tl.total++
		if results[i].pass {
			tl.pass++
			passing = append(passing, c.name)
		} else if strings.Contains(results[i].note, wrongCodeNote) {
			wrongCode = append(wrongCode, c.name)
		}
		if os.Getenv("XPATH2_VERBOSE") != "" && !results[i].pass {
			t.Logf("FAIL %s [%s]: %s -- %s", c.name, c.area, c.expr, results[i].note)
		}
	}
	areas := make([]string, 0, len(byArea))
	for a := range byArea {
		areas = append(areas, a)
	}
	sort.Strings(areas)
	for _, a := range areas {
		tl := byArea[a]
		t.Logf("%-22s %5d / %5d  %5.1f%%", a, tl.pass, tl.total, 100*float64(tl.pass)/float64(tl.total))
	}
	t.Logf("W3C XPath 2.0: %d / %d passed (%.1f%%); %d more fail only on the error code they raise",
		len(passing), len(cases), 100*float64(len(passing))/float64(len(cases)), len(wrongCode))
	checkWrongCodes(t, cases, results, wrongCode)

	listFile := filepath.Join("testdata", "passing.txt")
	if *updatePassing {
		sort.Strings(passing)
		if err := os.WriteFile(listFile, []byte(strings.Join(passing, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(listFile)
	if err != nil {
		t.Fatalf("read %s (refresh it with -update): %v", listFile, err)
	}
	passed := map[string]bool{}
	for _, n := range passing {
		passed[n] = true
	}
	byName := map[string]int{}
	for i, c := range cases {
		byName[c.name] = i
	}
	for _, n := range strings.Fields(string(want)) {
		if !passed[n] {
			i, ok := byName[n]
			if !ok {
				t.Errorf("regression: %s is listed in %s but not in the suite", n, listFile)
				continue
			}
			t.Errorf("regression: %s (%s) no longer passes: %s", n, cases[i].expr, results[i].note)
		}
	}
}
