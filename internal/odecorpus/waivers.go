// Package odecorpus holds what orchd knows about Apache ODE's bpel-test
// corpus (testdata/ode-corpus) that more than one package needs:
// the bundles that break WS-BPEL 2.0 static analysis rules ODE did not
// check. The conformance runner deploys them with those rules waived;
// the compiler's tests assert static analysis still finds exactly those
// rules in them, so the list cannot go stale. docs/static-analysis.md
// lists what each bundle breaks.
package odecorpus

// SpecWaivers returns, by bundle folder, the static analysis rules
// (WS-BPEL 2.0 Appendix B) the bundle breaks that ODE did not check. A
// bundle whose compiler error stands once its rules are waived (a
// waiver never lets through what the compiler refuses) is listed too:
// the list is of disagreements, not of what deploys.
func SpecWaivers() map[string][]string {
	return map[string][]string{
		// Imports name namespaces its WSDLs do not have.
		"TestAlarm": {"SA00011"},
		// HelloWorldAtomic.bpel imports two WSDLs of one namespace that
		// both define HelloPortType, one with a fault the other lacks.
		"TestAtomicScopeBasic": {"SA00014"},
		// A propertyAlias with messageType, part and type; receives and
		// replies name messageExchanges no scope declares.
		"TestIMA": {"SA00020", "SA00061"},
		// A propertyAlias with messageType and no part; a to-spec's query
		// written as its text (ODE 1.x).
		"TestInsertMissingData": {"SA00020", "SA00032"},
		// A propertyAlias with messageType, part and type.
		"TestSubTreeAssign": {"SA00020"},
		// Receives and replies name messageExchanges no scope declares.
		"TestPubSubOutOfProc": {"SA00061"},
		// As TestPubSubOutOfProc; and its two WSDLs of one namespace both
		// define HelloPortType and HelloSoapBinding, differently (the
		// compiler keeps the last and refuses the invoke of ping, which
		// only the first has).
		"TestPubSubInProc": {"SA00014", "SA00061"},
		// A second start activity after a pick and an assign; sets common
		// to the start activities initiated with "yes"; invoke
		// correlations without pattern, and for sets with no propertyAlias
		// for the probe message (which the compiler refuses too).
		"TestCorrelationMultiComplex": {"SA00021", "SA00046", "SA00056", "SA00057"},
	}
}
