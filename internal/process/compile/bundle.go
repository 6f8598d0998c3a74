package compile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchd/orchd/internal/bundlefs"
	"github.com/orchd/orchd/internal/exchange"
	"github.com/orchd/orchd/internal/process/ast"
	"github.com/orchd/orchd/internal/process/deploy"
	"github.com/orchd/orchd/internal/process/plan"
	"github.com/orchd/orchd/internal/process/wsdl"
	"github.com/orchd/orchd/internal/process/xmldoc"
)

// BundleError is a bundle that failed to load, with every problem found.
type BundleError struct {
	Dir string
	Err error
}

func (e *BundleError) Error() string { return fmt.Sprintf("bundle %s:\n%v", e.Dir, e.Err) }
func (e *BundleError) Unwrap() error { return e.Err }

// LoadDirWith loads every bundle folder (a folder holding deploy.xml) in
// dir, compiling with opts. Bundles that fail are returned as errors and
// left out; the others load. A symbolic link in dir (to a bundle folder
// or anything else) is returned as such an error: a bundle is a folder.
func LoadDirWith(dir string, opts LoadOptions) ([]*plan.Plan, []*BundleError, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read deploy directory: %w", err)
	}
	var procs []*plan.Plan
	var bad []*BundleError
	for _, ent := range entries {
		if ent.Type()&fs.ModeSymlink != 0 && !strings.HasPrefix(ent.Name(), ".") {
			// A bundle is a folder, never a link to one (bundlefs).
			sub := filepath.Join(dir, ent.Name())
			bad = append(bad, &BundleError{Dir: sub, Err: bundlefs.Check(sub, opts.Bundle)})
			continue
		}
		if !ent.IsDir() || strings.HasPrefix(ent.Name(), ".") {
			continue // a dot folder is never a bundle (an upload being unpacked)
		}
		sub := filepath.Join(dir, ent.Name())
		if _, err := os.Stat(filepath.Join(sub, "deploy.xml")); err != nil {
			continue
		}
		ps, err := LoadBundleWith(sub, opts)
		if err != nil {
			bad = append(bad, &BundleError{Dir: sub, Err: err})
			continue
		}
		procs = append(procs, ps...)
	}
	return procs, bad, nil
}

// LoadBundle loads and compiles the processes of one bundle folder. On any
// problem it returns an *Errors listing all of them (file, element, line)
// and no process.
func LoadBundle(dir string) ([]*plan.Plan, error) {
	return LoadBundleWith(dir, LoadOptions{})
}

// LoadBundleWith is LoadBundle compiling with opts: the extension
// namespaces it registers are known to the compiler.
func LoadBundleWith(dir string, opts LoadOptions) ([]*plan.Plan, error) {
	errs := &xmldoc.Errors{}
	name := filepath.Base(dir)
	// Links, devices and FIFOs anywhere in the folder, and a bundle over
	// its size bounds, are refused before any file is read.
	if err := bundlefs.Check(dir, opts.Bundle); err != nil {
		return nil, err
	}
	data, err := bundlefs.ReadFile(dir, "deploy.xml", opts.Bundle)
	if err != nil {
		return nil, fmt.Errorf("read deploy.xml: %w", err)
	}
	ddoc, err := xmldoc.Parse("deploy.xml", data)
	if err != nil {
		return nil, err
	}
	dd := deploy.Parse(ddoc, errs)
	if dd == nil {
		return nil, errs
	}
	dd.ReadSecrets(dir, opts.Bundle, opts.Replay, opts.AuthChecks, errs)
	files, _ := filepath.Glob(filepath.Join(dir, "*.bpel"))
	sort.Strings(files)
	// Each process sees the WSDLs it imports (two processes of a bundle
	// may import different definitions of one portType or message); the
	// services deploy.xml names are also looked up in the bundle's other
	// WSDLs (loadUnimported).
	sets := map[exchange.QName]*wsdl.Set{}
	docs := map[exchange.QName]*ast.Process{}
	unreadable := 0 // .bpel files that did not parse
	sources := map[exchange.QName][]byte{}
	for _, f := range files {
		rel := filepath.Base(f)
		b, err := bundlefs.ReadFile(dir, rel, opts.Bundle)
		if err != nil {
			errs.AddErr(fmt.Errorf("%s: %w", rel, err))
			continue
		}
		d, err := xmldoc.Parse(rel, b)
		if err != nil {
			errs.AddErr(err)
			unreadable++
			continue
		}
		// The syntax tree is parsed once, here, for static analysis and
		// the compiler.
		t := ast.Parse(d)
		if !t.Is("process") {
			errs.Add(t.Pos, t.Tag, "not a WS-BPEL 2.0 process: root is {%s}%s", t.Space, t.Tag)
			continue
		}
		q := exchange.QName{Space: t.AttrOr("targetNamespace", ""), Local: t.AttrOr("name", "")}
		docs[q] = t
		sources[q] = b
		w := wsdl.NewSet(dir, errs)
		w.Shared = opts.SharedFolders
		w.Limits = opts.Bundle
		sets[q] = w
		for _, imp := range t.Select("import") {
			loc := imp.AttrOr("location", "")
			switch imp.AttrOr("importType", "") {
			case xmldoc.ImportWSDL:
				if loc == "" {
					errs.Add(imp.Pos, "import", "WSDL import without location")
					continue
				}
				w.LoadWSDL(loc, imp.Pos)
			case xmldoc.ImportXSD:
				// Loaded only if a process validates (wsdlSet.schemas).
				if loc != "" {
					w.XsdImports = append(w.XsdImports, path.Clean(loc))
				}
			default:
				errs.Add(imp.Pos, "import", "unknown importType %q", imp.AttrOr("importType", ""))
			}
		}
		w.ResolveMessages()
		w.LoadUnimported()
	}
	var procs []*plan.Plan
	for _, dp := range dd.Processes {
		d, ok := docs[dp.Name]
		if !ok {
			if unreadable == 0 {
				errs.Add(dp.Pos, "process", "no .bpel file in %s defines process %s", name, dp.Name)
			}
			continue
		}
		mode := compatOf(opts.Compat, dp.Compat)
		checked, waived := staticCheck(d, sets[dp.Name], errs, waiver(opts.Waive, dp.Waive), mode)
		n := len(errs.List)
		p := compileProcess(d, sets[dp.Name], dp, errs, opts, mode)
		dropChecked(errs, n, checked)
		p.Warnings = append(waived, p.Warnings...)
		sum := sha256.Sum256(sources[dp.Name])
		p.Fingerprint = hex.EncodeToString(sum[:8])
		p.Bundle = name
		for _, ep := range p.Endpoints {
			ep.Path = plan.EndpointPath(ep.Address, ep.Service.Local)
		}
		procs = append(procs, p)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return procs, nil
}

// IsNotSupported reports whether err (from LoadBundle) includes a
// construct that is not supported yet.
func IsNotSupported(err error) bool { return errors.Is(err, xmldoc.ErrNotSupported) }
