package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/orchd/orchd/internal/process/expr"
	"github.com/orchd/orchd/internal/xpath2"
)

// listFlag is a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// xpathCommand defines orchd xpath's flags; its run evaluates one
// expression: each item of the result on a line as TYPE<TAB>VALUE, an
// error as error<TAB>CODE<TAB>message with exit code 1; 2 for a usage
// error.
func xpathCommand(fs *flag.FlagSet) runFunc {
	version := fs.String("version", "2.0", "XPath version: 1.0 (as XPath 1.0 processes run) or 2.0")
	ctxFile := fs.String("context", "", "XML `file` whose document node is the context item")
	maxItems := fs.Int("max-items", xpath2.DefaultMaxItems, "most items of a sequence the evaluation builds (XPath 2.0; negative: no bound)")
	maxStr := fs.Int("max-string-bytes", xpath2.DefaultMaxStringBytes, "most bytes of a string the evaluation builds (XPath 2.0; negative: no bound)")
	var nsFlags, varFlags listFlag
	fs.Var(&nsFlags, "ns", "`prefix=uri` namespace binding (repeatable; an empty prefix sets the default element namespace)")
	fs.Var(&varFlags, "var", "`name=file` binds $name to the file's document node, or to its text as xs:string when it is not XML (repeatable)")
	return func(_ context.Context, fs *flag.FlagSet, stdout, stderr io.Writer) int {
		if fs.NArg() != 1 || (*version != "1.0" && *version != "2.0") {
			fs.Usage()
			return 2
		}
		ns := map[string]string{}
		for _, b := range nsFlags {
			p, uri, ok := strings.Cut(b, "=")
			if !ok {
				fmt.Fprintf(stderr, "orchd xpath: --ns %q: want prefix=uri\n", b)
				return 2
			}
			ns[p] = uri
		}
		vars := map[string]xpath2.Input{}
		for _, b := range varFlags {
			name, file, ok := strings.Cut(b, "=")
			if !ok || name == "" || file == "" {
				fmt.Fprintf(stderr, "orchd xpath: --var %q: want name=file\n", b)
				return 2
			}
			in, err := xpath2.ReadInput(file)
			if err != nil {
				return printResult(stdout, nil, err)
			}
			vars[name] = in
		}
		var ctx xpath2.Input
		if *ctxFile != "" {
			var err error
			if ctx, err = xpath2.ReadInput(*ctxFile); err == nil && ctx.Doc == nil {
				err = &xpath2.Error{Code: "FODC0002", Msg: *ctxFile + ": the context must be an XML document"}
			}
			if err != nil {
				return printResult(stdout, nil, err)
			}
		}
		if *version == "1.0" {
			seq, err := expr.EvalXPath1(fs.Arg(0), ns, ctx.Doc, vars)
			return printResult(stdout, seq, err)
		}
		q := &xpath2.Query{Expr: fs.Arg(0), Namespaces: ns, Vars: map[string]xpath2.Sequence{},
			MaxItems: *maxItems, MaxStringBytes: *maxStr}
		for name, in := range vars {
			q.Vars[name] = xpath2.Sequence{in.Item()}
		}
		if ctx.Doc != nil {
			q.Context = ctx.Item()
		}
		seq, err := q.Evaluate()
		return printResult(stdout, seq, err)
	}
}

func printResult(w io.Writer, seq xpath2.Sequence, err error) int {
	if werr := xpath2.WriteResult(w, seq, err); werr != nil || err != nil {
		return 1
	}
	return 0
}
