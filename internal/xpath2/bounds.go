package xpath2

import "math"

// The bounds of one evaluation on what it builds (DynamicContext's
// MaxItems and MaxStringBytes). A million items is ten times the most
// elements one message may hold (serve --max-elements), and 16 MiB four
// times the largest message; the sequence and string one evaluation may
// build are far beyond any process seen and far below what takes a
// server's memory.
const (
	DefaultMaxItems       = 1_000_000
	DefaultMaxStringBytes = 16 << 20
)

// bounds resolves the dynamic context's bounds: 0 the default, negative
// none.
func bounds(dc *DynamicContext) (items, str int) {
	items, str = dc.MaxItems, dc.MaxStringBytes
	switch {
	case items == 0:
		items = DefaultMaxItems
	case items < 0:
		items = math.MaxInt
	}
	switch {
	case str == 0:
		str = DefaultMaxStringBytes
	case str < 0:
		str = math.MaxInt
	}
	return items, str
}

// items checks that a sequence of n items is within the evaluation's
// bound, before or as it is built.
func (c *evalCtx) items(n int) error {
	if n > c.dyn.maxItems {
		return tooManyItems(n, c.dyn.maxItems)
	}
	return nil
}

func tooManyItems(n, bound int) *Error {
	return errf("XPDY0130", "the evaluation builds a sequence of %d items, over the bound of %d items (--max-items sets it)", n, bound)
}

// strBytes checks that a string of n bytes is within the evaluation's
// bound, before it is built.
func (c Context) strBytes(n int) error {
	if n > c.c.dyn.maxStr {
		return errf("XPDY0130", "the evaluation builds a string of %d bytes, over the bound of %d bytes (--max-string-bytes sets it)", n, c.c.dyn.maxStr)
	}
	return nil
}

// MaxItems and MaxStringBytes are the evaluation's bounds, resolved, for
// the functions of a library that build sequences or strings.
func (c Context) MaxItems() int       { return c.c.dyn.maxItems }
func (c Context) MaxStringBytes() int { return c.c.dyn.maxStr }
