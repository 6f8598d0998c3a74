package main

import (
	"github.com/orchd/orchd/internal/b4p"
	"github.com/orchd/orchd/internal/process/compile"
)

// linkedExtensions are the extension bundles linked into this binary:
// for each namespace, the Go implementation of its extension activities
// and extension assign operations (compile.Extension). orchd ships
// BPEL4People's people activity (internal/b4p; ODE's REST activities are
// built in). To build orchd with another,
// implement compile.Extension in a package under internal/ and return it
// here, e.g.
//
//	return compile.Extensions{"urn:example:ext": myext.New(), b4p.NS: ...}
//
// serve compiles every bundle with them and the engine runs them;
// a process declaring a namespace mustUnderstand="yes" deploys only if
// it is here.
func linkedExtensions() compile.Extensions {
	// BPEL4People's people activity compiles everywhere (lint); serve
	// puts its own in place, bound to its engines.
	return b4p.New(b4p.Options{}).Extensions()
}
