// Command splitfile moves top-level declarations of a Go file into another
// file of the same package: the methods of the receiver types named by
// -recv, and the functions, types, vars and consts named by -names.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

func main() {
	recv := flag.String("recv", "compiler", "comma-separated receiver type names whose methods move")
	names := flag.String("names", "", "comma-separated other declarations that move")
	out := flag.String("o", "", "target file (appended to, or created)")
	flag.Parse()
	rs := set(*recv)
	ns := set(*names)
	for _, fn := range flag.Args() {
		src, err := os.ReadFile(fn)
		if err != nil {
			fail(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, fn, src, parser.ParseComments)
		if err != nil {
			fail(err)
		}
		type span struct{ a, b int }
		var cut []span
		for _, d := range f.Decls {
			move := false
			var doc *ast.CommentGroup
			switch d := d.(type) {
			case *ast.FuncDecl:
				doc = d.Doc
				if d.Recv != nil {
					t := d.Recv.List[0].Type
					if s, ok := t.(*ast.StarExpr); ok {
						t = s.X
					}
					if id, ok := t.(*ast.Ident); ok && rs[id.Name] {
						move = true
					}
				} else if ns[d.Name.Name] {
					move = true
				}
			case *ast.GenDecl:
				doc = d.Doc
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						move = move || ns[s.Name.Name]
					case *ast.ValueSpec:
						for _, n := range s.Names {
							move = move || ns[n.Name]
						}
					}
				}
			}
			if !move {
				continue
			}
			a := fset.Position(d.Pos()).Offset
			if doc != nil {
				a = fset.Position(doc.Pos()).Offset
			}
			b := fset.Position(d.End()).Offset
			for b < len(src) && src[b] == '\n' {
				b++
			}
			cut = append(cut, span{a, b})
		}
		if len(cut) == 0 {
			continue
		}
		var moved strings.Builder
		rest := []byte{}
		last := 0
		for _, c := range cut {
			rest = append(rest, src[last:c.a]...)
			moved.Write(src[c.a:c.b])
			moved.WriteString("\n")
			last = c.b
		}
		rest = append(rest, src[last:]...)
		// The imports of the source go along; goimports drops the unused.
		head := string(src[:fset.Position(f.Name.End()).Offset]) + "\n"
		imp := ""
		if len(f.Imports) > 0 {
			var first, end int = -1, 0
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
					if first < 0 {
						first = fset.Position(g.Pos()).Offset
					}
					end = fset.Position(g.End()).Offset
				}
			}
			imp = string(src[first:end]) + "\n\n"
		}
		var target []byte
		if old, err := os.ReadFile(*out); err == nil {
			target = append(old, []byte("\n"+moved.String())...)
			// merge imports: prepend this file's import block after the package clause
			if imp != "" {
				s := string(target)
				i := strings.Index(s, "\n") + 1
				target = []byte(s[:i] + "\n" + imp + s[i:])
			}
		} else {
			pkgLine := head[strings.LastIndex(head, "package "):]
			target = []byte(pkgLine + "\n" + imp + moved.String())
		}
		if err := os.WriteFile(*out, target, 0o644); err != nil {
			fail(err)
		}
		if err := os.WriteFile(fn, rest, 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("%s: %d declarations to %s\n", fn, len(cut), *out)
	}
}

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			m[x] = true
		}
	}
	return m
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "splitfile:", err)
	os.Exit(1)
}
