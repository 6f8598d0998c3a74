// Command unmethod turns methods into functions (receiver first) and
// rewrites their calls; a method of an interface whose implementations are
// all converted becomes a dispatch function with a type switch.
package main

import (
	"bytes"
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

type edit struct {
	off, end int
	text     string
}

func main() {
	dir := flag.String("dir", ".", "module root")
	src := flag.String("pkg", "", "package")
	sigTypes := flag.String("sig", "instance,frame,thread,Engine", "a method whose parameters mention one of these types is converted")
	recvs := flag.String("recv", "", "only methods of these receiver types")
	skipFiles := flag.String("skipfiles", "", "files whose methods stay")
	iface := flag.String("iface", "", "interface.method pairs to dispatch, e.g. activity.step")
	skipM := flag.String("skip", "", "Type.method to leave alone")
	flag.Parse()
	fset := token.NewFileSet()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Tests: true, Dir: *dir, Fset: fset}
	pkgs, err := packages.Load(cfg, *src)
	if err != nil {
		fail(err)
	}
	var p *packages.Package
	for _, q := range pkgs {
		if q.PkgPath == *src && (p == nil || len(q.Syntax) > len(p.Syntax)) {
			p = q
		}
	}
	sig := set(*sigTypes)
	rs := set(*recvs)
	skipF := set(*skipFiles)
	skip := set(*skipM)
	mentions := func(t types.Type) bool {
		found := false
		var walk func(t types.Type)
		walk = func(t types.Type) {
			switch t := t.(type) {
			case *types.Pointer:
				walk(t.Elem())
			case *types.Slice:
				walk(t.Elem())
			case *types.Named:
				if t.Obj().Pkg() == p.Types && sig[t.Obj().Name()] {
					found = true
				}
			}
		}
		walk(t)
		return found
	}
	type conv struct {
		fn    *types.Func
		decl  *ast.FuncDecl
		name  string
		ptr   bool
		tname string
	}
	convs := map[*types.Func]*conv{}
	byKey := map[string]*conv{}
	for _, f := range p.Syntax {
		fn := fset.Position(f.Package).Filename
		if skipF[filepath.Base(fn)] || strings.HasSuffix(fn, "_test.go") {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			obj := p.TypesInfo.Defs[fd.Name].(*types.Func)
			s := obj.Signature()
			rt := s.Recv().Type()
			ptr := false
			if pt, ok := rt.(*types.Pointer); ok {
				rt, ptr = pt.Elem(), true
			}
			nt, ok := rt.(*types.Named)
			if !ok || sig[nt.Obj().Name()] || (len(rs) > 0 && !rs[nt.Obj().Name()]) || skip[nt.Obj().Name()+"."+obj.Name()] {
				continue
			}
			hit := false
			for i := 0; i < s.Params().Len(); i++ {
				hit = hit || mentions(s.Params().At(i).Type())
			}
			for i := 0; i < s.Results().Len(); i++ {
				hit = hit || mentions(s.Results().At(i).Type())
			}
			if !hit {
				continue
			}
			tn := nt.Obj().Name()
			c := &conv{fn: obj, decl: fd, name: obj.Name() + upper(tn), ptr: ptr, tname: tn}
			convs[obj] = c
			byKey[tn+"."+obj.Name()] = c
		}
	}
	// Interface dispatch.
	type disp struct {
		iface *types.Named
		m     *types.Func
		name  string
		impls []*conv
	}
	disps := map[*types.Func]*disp{}
	for _, pair := range strings.Split(*iface, ",") {
		in, mn, ok := strings.Cut(pair, ".")
		if !ok {
			continue
		}
		tn, _ := p.Types.Scope().Lookup(in).(*types.TypeName)
		if tn == nil {
			fail(fmt.Errorf("no interface %s", in))
		}
		it := tn.Type().Underlying().(*types.Interface)
		var m *types.Func
		for i := 0; i < it.NumMethods(); i++ {
			if it.Method(i).Name() == mn {
				m = it.Method(i)
			}
		}
		d := &disp{iface: tn.Type().(*types.Named), m: m, name: mn + upper(in)}
		for _, c := range convs {
			if c.fn.Name() == mn && types.Implements(types.NewPointer(types.Universe.Lookup("int").Type()), it) {
			}
			if c.fn.Name() == mn {
				var t types.Type = p.Types.Scope().Lookup(c.tname).Type()
				if c.ptr {
					t = types.NewPointer(t)
				}
				if types.Implements(t, it) {
					d.impls = append(d.impls, c)
				}
			}
		}
		sort.Slice(d.impls, func(i, j int) bool { return d.impls[i].tname < d.impls[j].tname })
		disps[m] = d
	}
	edits := map[string][]edit{}
	srcOf := map[string][]byte{}
	text := func(n ast.Node) string {
		fn := fset.Position(n.Pos()).Filename
		return string(srcOf[fn][fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
	}
	for _, f := range p.Syntax {
		fn := fset.Position(f.Package).Filename
		data, _ := os.ReadFile(fn)
		srcOf[fn] = data
	}
	off := func(pos token.Pos) int { return fset.Position(pos).Offset }
	for _, f := range p.Syntax {
		fn := fset.Position(f.Package).Filename
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			s := p.TypesInfo.Selections[sel]
			if s == nil || s.Kind() != types.MethodVal {
				return true
			}
			m := s.Obj().(*types.Func)
			var name string
			var ptr bool
			if c, ok := convs[m]; ok {
				name, ptr = c.name, c.ptr
			} else if d, ok := disps[m]; ok {
				name, ptr = d.name, false
			} else {
				return true
			}
			x := text(sel.X)
			xt := p.TypesInfo.TypeOf(sel.X)
			_, xptr := xt.(*types.Pointer)
			if types.IsInterface(xt) {
				xptr = ptr
			}
			switch {
			case ptr && !xptr:
				x = "&" + x
			case !ptr && xptr:
				x = "*" + x
			}
			sep := ""
			if len(call.Args) > 0 {
				sep = ", "
			}
			edits[fn] = append(edits[fn], edit{off(sel.X.Pos()), off(call.Lparen) + 1, name + "(" + x + sep})
			return true
		})
	}
	for _, c := range convs {
		fn := fset.Position(c.decl.Pos()).Filename
		recv := c.decl.Recv.List[0]
		rtext := text(recv.Type)
		rname := "_"
		if len(recv.Names) > 0 {
			rname = recv.Names[0].Name
		}
		sep := ""
		if len(c.decl.Type.Params.List) > 0 {
			sep = ", "
		}
		edits[fn] = append(edits[fn], edit{off(c.decl.Recv.Opening), off(c.decl.Type.Params.Opening) + 1, c.name + "(" + rname + " " + rtext + sep})
		if c.decl.Doc != nil {
			first := c.decl.Doc.List[0]
			if strings.HasPrefix(first.Text, "// "+c.fn.Name()+" ") {
				a := off(first.Pos()) + 3
				edits[fn] = append(edits[fn], edit{a, a + len(c.fn.Name()), c.name})
			}
		}
	}
	// Remove dispatched methods from their interfaces and write dispatchers.
	var gen bytes.Buffer
	for m, d := range disps {
		for _, f := range p.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				it, ok := n.(*ast.InterfaceType)
				if !ok {
					return true
				}
				for _, fl := range it.Methods.List {
					if len(fl.Names) == 1 && p.TypesInfo.Defs[fl.Names[0]] == m {
						fn := fset.Position(fl.Pos()).Filename
						a, b := off(fl.Pos()), off(fl.End())
						if fl.Doc != nil {
							a = off(fl.Doc.Pos())
						}
						edits[fn] = append(edits[fn], edit{a, b, ""})
					}
				}
				return true
			})
		}
		sg := m.Signature()
		var params, args []string
		for i := 0; i < sg.Params().Len(); i++ {
			v := sg.Params().At(i)
			nm := v.Name()
			if nm == "" || nm == "_" {
				nm = fmt.Sprintf("p%d", i)
			}
			params = append(params, nm+" "+types.TypeString(v.Type(), types.RelativeTo(p.Types)))
			args = append(args, nm)
		}
		res := types.TypeString(sg.Results(), types.RelativeTo(p.Types))
		fmt.Fprintf(&gen, "\n// %s runs %s's %s: the one switch over the types that implement it.\nfunc %s(x %s, %s) %s {\n\tswitch a := x.(type) {\n", d.name, d.iface.Obj().Name(), m.Name(), d.name, d.iface.Obj().Name(), strings.Join(params, ", "), res)
		for _, c := range d.impls {
			star := ""
			if c.ptr {
				star = "*"
			}
			fmt.Fprintf(&gen, "\tcase %s%s:\n\t\treturn %s(a, %s)\n", star, c.tname, c.name, strings.Join(args, ", "))
		}
		fmt.Fprintf(&gen, "\t}\n\tpanic(fmt.Sprintf(\"%s: no case for %%T\", x))\n}\n", d.name)
	}
	var changed []string
	for fn, es := range edits {
		data := srcOf[fn]
		sort.Slice(es, func(i, j int) bool { return es[i].off < es[j].off })
		for i := 1; i < len(es); i++ {
			if es[i].off < es[i-1].end {
				fmt.Fprintf(os.Stderr, "overlapping edits in %s at %d\n", fn, es[i].off)
			}
		}
		for i := len(es) - 1; i >= 0; i-- {
			e := es[i]
			data = append(data[:e.off:e.off], append([]byte(e.text), data[e.end:]...)...)
		}
		os.WriteFile(fn, data, 0o644)
		changed = append(changed, fn)
	}
	if gen.Len() > 0 {
		out := filepath.Join(filepath.Dir(fset.Position(p.Syntax[0].Package).Filename), "dispatch.go")
		os.WriteFile(out, []byte("package "+p.Name+"\n\nimport \"fmt\"\n"+gen.String()), 0o644)
		changed = append(changed, out)
	}
	gi := exec.Command(filepath.Join(filepath.Dir(os.Args[0]), "goimports"), append([]string{"-w"}, changed...)...)
	gi.Stderr = os.Stderr
	gi.Run()
	fmt.Printf("%d methods converted, %d dispatchers, %d files\n", len(convs), len(disps), len(changed))
	var names []string
	for _, c := range convs {
		names = append(names, c.tname+"."+c.fn.Name()+" -> "+c.name)
	}
	sort.Strings(names)
	fmt.Println(strings.Join(names, "\n"))
}

func upper(s string) string {
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
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
	fmt.Fprintln(os.Stderr, "unmethod:", err)
	os.Exit(1)
}
