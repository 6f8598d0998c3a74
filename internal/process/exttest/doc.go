// Package exttest is a small BPEL extension bundle for tests: the
// extension activities and assign operations the engine's and the
// interpreter's tests (and the semantic corpus) compile their bundles
// with. It exists once so that both test suites exercise the same
// extension.
//
// It owns nothing the server runs: only test files may import it (the
// import rules test says so), and it imports only the compiler's
// extension API, the plan and expr's string value.
package exttest
