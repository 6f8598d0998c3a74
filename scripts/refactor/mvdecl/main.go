// Command mvdecl moves the declarations of some files of a Go package into
// another package: it exports what the rest of the module uses, qualifies
// references, and reports dependencies that would form a cycle.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/tools/go/packages"
)

type key struct {
	file string
	off  int
}

type edit struct {
	off, end int
	text     string
	prio     int
}

var (
	fset    = token.NewFileSet()
	edits   = map[string]map[int]edit{}
	imports = map[string]bool{} // files that need the new import
)

func addEdit(file string, e edit) {
	m := edits[file]
	if m == nil {
		m = map[int]edit{}
		edits[file] = m
	}
	if old, ok := m[e.off]; ok && old.prio >= e.prio {
		return
	}
	m[e.off] = e
}

func posKey(p token.Pos) key {
	pos := fset.Position(p)
	return key{pos.Filename, pos.Offset}
}

func main() {
	dir := flag.String("dir", ".", "module root")
	src := flag.String("pkg", "", "import path of the source package")
	files := flag.String("files", "", "comma-separated files of the source package to move")
	to := flag.String("to", "", "import path of the target package")
	name := flag.String("name", "", "target package name (default: last element of -to)")
	renames := flag.String("rename", "", "old=New,... explicit names")
	dry := flag.Bool("dry", false, "report only")
	allow := flag.Bool("allow", false, "move even with dependencies on the source package")
	flag.Parse()
	if *name == "" {
		*name = (*to)[strings.LastIndex(*to, "/")+1:]
	}
	over := map[string]string{}
	for _, r := range strings.Split(*renames, ",") {
		if a, b, ok := strings.Cut(r, "="); ok {
			over[a] = b
		}
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
		Tests: true, Dir: *dir, Fset: fset}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		fail(err)
	}
	var srcDir string
	moved := map[string]bool{}
	for _, p := range pkgs {
		if p.PkgPath == *src && len(p.GoFiles) > 0 {
			srcDir = filepath.Dir(p.GoFiles[0])
		}
		for _, e := range p.Errors {
			fmt.Fprintln(os.Stderr, "load:", e)
		}
	}
	if srcDir == "" {
		fail(fmt.Errorf("package %s not found", *src))
	}
	for _, f := range strings.Split(*files, ",") {
		moved[filepath.Join(srcDir, strings.TrimSpace(f))] = true
	}
	isMovedFile := func(p token.Pos) bool { return moved[fset.Position(p).Filename] }

	// Pass 1: the moved objects (top level and members), by position.
	top := map[key]types.Object{}
	member := map[key]types.Object{}
	methodNames := map[string]bool{} // methods declared in moved files
	var problems []string
	for _, p := range pkgs {
		if p.PkgPath != *src {
			continue
		}
		for id, obj := range p.TypesInfo.Defs {
			if obj == nil || !isMovedFile(id.Pos()) {
				continue
			}
			switch o := obj.(type) {
			case *types.Func:
				if recv := o.Signature().Recv(); recv != nil {
					member[posKey(o.Pos())] = o
					methodNames[o.Name()] = true
					continue
				}
			case *types.Var:
				if o.IsField() {
					member[posKey(o.Pos())] = o
					continue
				}
			}
			if obj.Parent() == obj.Pkg().Scope() {
				top[posKey(obj.Pos())] = obj
			}
		}
		// Methods of moved types declared elsewhere, and moved methods of
		// types that stay.
		for id, obj := range p.TypesInfo.Defs {
			f, ok := obj.(*types.Func)
			if !ok || f.Signature().Recv() == nil {
				continue
			}
			rt := f.Signature().Recv().Type()
			if pt, ok := rt.(*types.Pointer); ok {
				rt = pt.Elem()
			}
			nt, ok := rt.(*types.Named)
			if !ok {
				continue
			}
			typeMoved := isMovedFile(nt.Obj().Pos())
			if typeMoved != isMovedFile(id.Pos()) && !strings.HasSuffix(fset.Position(id.Pos()).Filename, "_test.go") {
				problems = append(problems, fmt.Sprintf("%s: method %s.%s is declared apart from its type", fset.Position(id.Pos()), nt.Obj().Name(), f.Name()))
			}
		}
	}
	inSet := func(obj types.Object) bool {
		k := posKey(obj.Pos())
		return top[k] != nil || member[k] != nil
	}
	// Pass 2: what must be exported, and what the moved files depend on.
	export := map[key]string{}
	exportMethod := map[string]string{}
	newName := func(n string) string {
		if o, ok := over[n]; ok {
			return o
		}
		r := []rune(n)
		r[0] = unicode.ToUpper(r[0])
		return string(r)
	}
	seenDep := map[string]bool{}
	for _, p := range pkgs {
		for id, obj := range p.TypesInfo.Uses {
			if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != *src {
				continue
			}
			usedInMoved := isMovedFile(id.Pos())
			if inSet(obj) {
				if !usedInMoved && !obj.Exported() {
					if f, ok := obj.(*types.Func); ok && f.Signature().Recv() != nil {
						exportMethod[obj.Name()] = newName(obj.Name())
					} else {
						export[posKey(obj.Pos())] = newName(obj.Name())
					}
				}
				continue
			}
			if usedInMoved && p.PkgPath == *src {
				// A use of something that stays: a cycle, unless it is a
				// method or field of a type from elsewhere or universe.
				if obj.Parent() == obj.Pkg().Scope() || isMember(obj) {
					msg := fmt.Sprintf("%s: moved code uses %s (%s)", fset.Position(id.Pos()), obj.Name(), fset.Position(obj.Pos()))
					if !seenDep[msg] {
						seenDep[msg] = true
						problems = append(problems, msg)
					}
				}
			}
		}
	}
	// Methods are renamed by family: a method and the interface methods
	// it implements in the source package (and their other
	// implementations), so interfaces keep matching.
	parent := map[key]key{}
	var find func(k key) key
	find = func(k key) key {
		if p, ok := parent[k]; ok && p != k {
			r := find(p)
			parent[k] = r
			return r
		}
		return k
	}
	union := func(a, b key) { parent[find(a)] = find(b) }
	for _, p := range pkgs {
		if p.PkgPath != *src {
			continue
		}
		sc := p.Types.Scope()
		var named, ifaces []*types.TypeName
		for _, n := range sc.Names() {
			if tn, ok := sc.Lookup(n).(*types.TypeName); ok {
				if types.IsInterface(tn.Type()) {
					ifaces = append(ifaces, tn)
				} else {
					named = append(named, tn)
				}
			}
		}
		for _, it := range ifaces {
			iface := it.Type().Underlying().(*types.Interface)
			for _, tn := range named {
				var t types.Type = tn.Type()
				if !types.Implements(t, iface) {
					t = types.NewPointer(t)
					if !types.Implements(t, iface) {
						continue
					}
				}
				for i := 0; i < iface.NumMethods(); i++ {
					m := iface.Method(i)
					obj, _, _ := types.LookupFieldOrMethod(t, true, p.Types, m.Name())
					if obj != nil && obj.Pkg() == p.Types {
						union(posKey(obj.Pos()), posKey(m.Pos()))
					}
				}
			}
		}
	}
	renameFamily := map[key]string{}
	// A family with methods on both sides of the move (an interface that
	// stays, implemented by a type that moves) must be exported.
	sides := map[key][2]bool{}
	famName := map[key]string{}
	for _, p := range pkgs {
		if p.PkgPath != *src {
			continue
		}
		for id, obj := range p.TypesInfo.Defs {
			if f, ok := obj.(*types.Func); ok && f.Signature().Recv() != nil && !f.Exported() {
				r := find(posKey(id.Pos()))
				sd := sides[r]
				if isMovedFile(id.Pos()) {
					sd[0] = true
				} else {
					sd[1] = true
				}
				sides[r] = sd
				famName[r] = f.Name()
			}
		}
	}
	for r, sd := range sides {
		if sd[0] && sd[1] {
			renameFamily[r] = newName(famName[r])
		}
	}
	for _, p := range pkgs {
		if p.PkgPath != *src {
			continue
		}
		for id, obj := range p.TypesInfo.Defs {
			if f, ok := obj.(*types.Func); ok && f.Signature().Recv() != nil && inSet(f) {
				if nn, ok := exportMethod[f.Name()]; ok {
					renameFamily[find(posKey(id.Pos()))] = nn
				}
			}
		}
	}
	for _, p := range pkgs {
		if p.PkgPath != *src {
			continue
		}
		for id, obj := range p.TypesInfo.Defs {
			if f, ok := obj.(*types.Func); ok && f.Signature().Recv() != nil {
				if nn, ok := renameFamily[find(posKey(id.Pos()))]; ok {
					export[posKey(id.Pos())] = nn
				}
			}
			if v, ok := obj.(*types.Var); ok && v.IsField() && v.Embedded() {
				if nt := namedOf(v.Type()); nt != nil {
					if nn, ok := export[posKey(nt.Obj().Pos())]; ok {
						export[posKey(id.Pos())] = nn
					}
				}
			}
		}
		// Interface methods (declared in interface types) have Defs too.
	}
	// A second look at embedded fields: their type may be exported only now.
	for _, p := range pkgs {
		if p.PkgPath != *src {
			continue
		}
		for id, obj := range p.TypesInfo.Defs {
			if v, ok := obj.(*types.Var); ok && v.IsField() && v.Embedded() {
				if nt := namedOf(v.Type()); nt != nil && nt.Obj().Pkg() != nil && nt.Obj().Pkg().Path() == *src {
					if nn, ok := export[posKey(nt.Obj().Pos())]; ok {
						export[posKey(id.Pos())] = nn
					}
				}
			}
		}
	}
	sort.Strings(problems)
	for _, pr := range problems {
		fmt.Println("PROBLEM", pr)
	}
	var names []string
	for k, n := range export {
		names = append(names, fmt.Sprintf("%s:%d -> %s", filepath.Base(k.file), k.off, n))
	}
	sort.Strings(names)
	fmt.Printf("%d exports, %d method names, %d problems\n", len(export), len(exportMethod), len(problems))
	if *dry {
		for _, n := range names {
			fmt.Println("export", n)
		}
		for m, n := range exportMethod {
			fmt.Println("method", m, "->", n)
		}
		return
	}
	if len(problems) > 0 && !*allow {
		fail(fmt.Errorf("refusing with problems (use -allow)"))
	}
	// Pass 3: edits.
	done := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			fn := fset.Position(f.Package).Filename
			if done[fn] {
				continue
			}
			done[fn] = true
			if moved[fn] {
				addEdit(fn, edit{off: fset.Position(f.Name.Pos()).Offset, end: fset.Position(f.Name.End()).Offset, text: *name, prio: 9})
			}
			info := p.TypesInfo
			// Qualified uses from other packages: process.X.
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				pn, ok := info.Uses[x].(*types.PkgName)
				if ok && moved[fn] && pn.Imported().Path() == *to {
					addEdit(fn, edit{off: off(x.Pos()), end: off(sel.Sel.Pos()), text: "", prio: 5})
					return false
				}
				if !ok || pn.Imported().Path() != *src {
					return true
				}
				obj := info.Uses[sel.Sel]
				if obj == nil || top[posKey(obj.Pos())] == nil {
					return true
				}
				nm := obj.Name()
				if nn, ok := export[posKey(obj.Pos())]; ok {
					nm = nn
				}
				if p.PkgPath == *to || strings.HasPrefix(p.PkgPath, *to+"_test") {
					addEdit(fn, edit{off: off(x.Pos()), end: off(sel.Sel.End()), text: nm, prio: 5})
				} else {
					addEdit(fn, edit{off: off(x.Pos()), end: off(sel.Sel.End()), text: *name + "." + nm, prio: 5})
					imports[fn] = true
				}
				return false
			})
			for _, m := range []map[*ast.Ident]types.Object{info.Defs, info.Uses} {
				for id, obj := range m {
					if obj == nil || fset.Position(id.Pos()).Filename != fn {
						continue
					}
					nm := obj.Name()
					if nn, ok := export[posKey(obj.Pos())]; ok {
						nm = nn
					}
					if v, ok := obj.(*types.Var); ok && v.IsField() && v.Embedded() {
						if nn, ok := export[posKey(id.Pos())]; ok {
							nm = nn
						}
					}
					if tn, ok := obj.(*types.TypeName); ok {
						_ = tn
					}
					if p.PkgPath == *src && !moved[fn] && top[posKey(obj.Pos())] != nil && m[id] != nil && isUse(info, id) {
						addEdit(fn, edit{off: off(id.Pos()), end: off(id.End()), text: *name + "." + nm, prio: 4})
						imports[fn] = true
						continue
					}
					if nm != obj.Name() || (id.Name != nm) {
						addEdit(fn, edit{off: off(id.Pos()), end: off(id.End()), text: nm, prio: 3})
					}
				}
			}
		}
	}
	// Apply.
	targetDir := filepath.Join(*dir, strings.TrimPrefix(*to, modulePath(*dir)))
	if err := os.MkdirAll(targetDir, 0o755); err != nil {
		fail(err)
	}
	var changed []string
	for fn, m := range edits {
		data, err := os.ReadFile(fn)
		if err != nil {
			fail(err)
		}
		var es []edit
		for _, e := range m {
			es = append(es, e)
		}
		sort.Slice(es, func(i, j int) bool { return es[i].off < es[j].off })
		kept := es[:0]
		for _, e := range es {
			if n := len(kept); n > 0 && e.off < kept[n-1].end {
				continue // inside an edit that replaces it
			}
			kept = append(kept, e)
		}
		for i := len(kept) - 1; i >= 0; i-- {
			e := kept[i]
			data = append(data[:e.off:e.off], append([]byte(e.text), data[e.end:]...)...)
		}
		if imports[fn] {
			data = addImport(data, *to, *name)
		}
		out := fn
		if moved[fn] {
			out = filepath.Join(targetDir, filepath.Base(fn))
			if err := exec.Command("git", "-C", *dir, "mv", fn, out).Run(); err != nil {
				os.Remove(fn)
			}
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			fail(err)
		}
		changed = append(changed, out)
	}
	for fn := range moved {
		if edits[fn] == nil {
			out := filepath.Join(targetDir, filepath.Base(fn))
			exec.Command("git", "-C", *dir, "mv", fn, out).Run()
			changed = append(changed, out)
		}
	}
	gi := exec.Command(filepath.Join(filepath.Dir(os.Args[0]), "goimports"), append([]string{"-w"}, changed...)...)
	gi.Stdout, gi.Stderr = os.Stdout, os.Stderr
	if err := gi.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "goimports:", err)
	}
	fmt.Printf("%d files changed\n", len(changed))
}

func isUse(info *types.Info, id *ast.Ident) bool { _, ok := info.Uses[id]; return ok }

func isMember(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Var:
		return o.IsField()
	case *types.Func:
		return o.Signature().Recv() != nil
	}
	return false
}

func namedOf(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if a, ok := t.(*types.Alias); ok {
		_ = a
		return nil
	}
	n, _ := t.(*types.Named)
	return n
}

func off(p token.Pos) int { return fset.Position(p).Offset }

func addImport(data []byte, path, name string) []byte {
	s := string(data)
	if strings.Contains(s, fmt.Sprintf("%q", path)) {
		return data
	}
	line := fmt.Sprintf("\t%q\n", path)
	if name != path[strings.LastIndex(path, "/")+1:] {
		line = fmt.Sprintf("\t%s %q\n", name, path)
	}
	if i := strings.Index(s, "\nimport (\n"); i >= 0 {
		j := i + strings.Index(s[i:], "\n)\n") + 1
		return []byte(s[:j] + line + s[j:])
	}
	if i := strings.Index(s, "\nimport "); i >= 0 {
		return []byte(s[:i+1] + "import (\n" + line + ")\n" + s[i+1:])
	}
	// After the package clause.
	i := strings.Index(s, "\npackage ")
	if !strings.HasPrefix(s, "package ") && i < 0 {
		return data
	}
	if strings.HasPrefix(s, "package ") {
		i = -1
	}
	k := strings.Index(s[i+1:], "\n") + i + 1
	return []byte(s[:k+1] + "\nimport (\n" + line + ")\n" + s[k+1:])
}

func modulePath(dir string) string {
	data, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(l, "module ")) + "/"
		}
	}
	return ""
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mvdecl:", err)
	os.Exit(1)
}
