package inbox

import (
	"encoding/xml"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/humantask"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
	"github.com/orchd/orchd/internal/xsd"
)

// Output is what a task's form is made from: the schema set of its
// bundle, its output element's declaration, and the names of the
// faults its operation declares.
type Output struct {
	Set    *xsd.Set
	Elem   *xsd.Element
	Faults []string
}

// BundleSchemas finds a task's output in the WSDLs and schemas of its
// bundle's folder (dirOf(bundle)): the output message of the operation
// of its definition's interface, whose first part names an element.
// What it reads is kept per folder.
type BundleSchemas struct {
	Tasks *humantask.Engine
	DirOf func(bundle string) string

	mu   sync.Mutex
	sets map[string]*wsdl.Set
}

// Output implements the inbox's schema source.
func (b *BundleSchemas) Output(t humantask.Task) (*Output, error) {
	def, ok := b.Tasks.Definition(t.Name)
	if !ok {
		return nil, fmt.Errorf("task definition {%s}%s is not deployed", t.Name.Space, t.Name.Local)
	}
	dir := b.DirOf(t.Bundle)
	if dir == "" {
		return nil, fmt.Errorf("bundle %q has no folder", t.Bundle)
	}
	ws := b.set(dir)
	pt := ws.PortTypes[toQ(def.Interface.PortType)]
	if pt == nil {
		return nil, fmt.Errorf("port type {%s}%s is not in bundle %s", def.Interface.PortType.Space, def.Interface.PortType.Local, t.Bundle)
	}
	op := pt.Ops[def.Interface.Operation]
	if op == nil || op.Output == nil || len(op.Output.Parts) == 0 || op.Output.Parts[0].Element.IsZero() {
		return nil, fmt.Errorf("operation %s of %s has no output element", def.Interface.Operation, pt.Name.Local)
	}
	e := op.Output.Parts[0].Element
	set := ws.Schemas()
	el, err := set.Element(xsd.QName{Space: e.Space, Local: e.Local})
	if err != nil {
		return nil, err
	}
	out := &Output{Set: set, Elem: el}
	for name := range op.Faults {
		out.Faults = append(out.Faults, name)
	}
	sort.Strings(out.Faults)
	return out, nil
}

func (b *BundleSchemas) set(dir string) *wsdl.Set {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ws := b.sets[dir]; ws != nil {
		return ws
	}
	var errs xmldoc.Errors
	ws := wsdl.NewSet(dir, &errs)
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".wsdl") {
			if rel, err := filepath.Rel(dir, p); err == nil {
				ws.LoadWSDL(filepath.ToSlash(rel), xmldoc.Pos{})
			}
		}
		return nil
	})
	ws.ResolveMessages()
	if b.sets == nil {
		b.sets = map[string]*wsdl.Set{}
	}
	b.sets[dir] = ws
	return ws
}

func toQ(n xml.Name) exchange.QName { return exchange.QName{Space: n.Space, Local: n.Local} }
