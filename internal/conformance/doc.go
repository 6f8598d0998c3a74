// Package conformance runs Apache ODE's bpel-test corpus
// (testdata/ode-corpus, relative to the repository root) against
// orchd, the way ODE's BPELTestAbstract drove it; see the corpus's
// MANIFEST.md and ODE-NOTES.md.
//
// For each bundle folder the harness loads the bundle with the engine's
// LoadBundle, the engine registering ODE's test extension bundle
// (odemock.TestExtension, namespace urn:ode:test-extension-bundle, as
// ODE's harness installed it), forces every process in-memory (ODE's
// harness forced transient), and serves it with a real engine, SOAP front door and HTTP
// handler on its own 127.0.0.1 port. Partner links whose portType is ODE's
// ProbeService or FaultService are pointed at the odemock partners through
// an endpoints.Table, as `orchd serve --endpoints` would.
//
// Cases come from test.properties, test1.properties, ... (read with Java
// .properties rules, stopping at the first missing number), joined with
// tests.tsv for ODE's status, plus the tsv's "(java)" rows and the
// MANIFEST's deploy-must-fail folders. A bundle's cases are launched
// concurrently, Stagger apart (2 s, as ODE), each bounded by Timeout (60 s).
// A request is routed by the properties file's service QName to the
// deployed endpoint (exactly, then ignoring the case of the local name),
// encoded by orchd's own SOAP client for that endpoint's binding, and the
// answer is serialized back to ODE's normalized
// <?xml ...?><message><part>...</part></message> form and matched against
// the response regex as (?s)^(?:regex)$. A fault fails a case that has a
// response regex; a case without one passes when the exchange completes
// (a declared WSDL fault completes it, a Server/Client fault does not).
//
// Every case is reported, one line each: PASS id, FAIL id: reason, or
// SKIP id: not run: reason; then "N passed, M failed, K not run".
//
// Tests: TestConformanceRegression (always) runs the cases listed in
// testdata/passing.txt and fails if one of them does not pass;
// TestConformanceAll runs everything when ORCHD_CONFORMANCE=all (make
// conformance) and never fails on case outcomes;
// -update-passing rewrites testdata/passing.txt from a full run.
package conformance
