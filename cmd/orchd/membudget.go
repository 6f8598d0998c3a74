package main

import (
	"flag"

	"github.com/orchd/orchd/internal/process/membudget"
	"github.com/orchd/orchd/internal/xpath2"
)

// memoryFlags defines serve's memory bounds (docs/limits.md, "Memory
// budgets").
func memoryFlags(fs *flag.FlagSet, b *membudget.Bounds) {
	fs.Int64Var(&b.MaxVariableBytes, "max-variable-bytes", membudget.DefaultMaxVariableBytes, "most bytes one variable may hold (names, attributes and text); a copy over it stops the run with orchd:memoryBudgetExceeded (in-memory: fails, persistent: suspended); deploy.xml's orchd:maxVariableBytes overrides it; negative: no bound")
	fs.Int64Var(&b.MaxRunBytes, "max-run-bytes", membudget.DefaultMaxRunBytes, "most bytes one run of an instance may assign into variables before it waits; over it the run stops with orchd:memoryBudgetExceeded; deploy.xml's orchd:maxRunBytes overrides it; negative: no bound")
	fs.IntVar(&b.MaxItems, "max-items", xpath2.DefaultMaxItems, "most items of a sequence one XPath 2.0 or XQuery evaluation builds (over it: the XPath error XPDY0130, a bpel:subLanguageExecutionFault); negative: no bound")
	fs.IntVar(&b.MaxStringBytes, "max-string-bytes", xpath2.DefaultMaxStringBytes, "most bytes of a string one XPath 2.0 or XQuery evaluation builds (over it: XPDY0130); negative: no bound")
}
