package xmldoc

// Namespaces the loader and compiler know.
const (
	NSWSDL     = "http://schemas.xmlsoap.org/wsdl/"
	NSSOAP11   = "http://schemas.xmlsoap.org/wsdl/soap/"
	NSSOAP12   = "http://schemas.xmlsoap.org/wsdl/soap12/"
	NSXSD      = "http://www.w3.org/2001/XMLSchema"
	NSPlnk     = "http://docs.oasis-open.org/wsbpel/2.0/plnktype"
	NSVprop    = "http://docs.oasis-open.org/wsbpel/2.0/varprop"
	NSBPEL     = "http://docs.oasis-open.org/wsbpel/2.0/process/executable"
	NSBPEL2004 = "http://schemas.xmlsoap.org/ws/2004/03/business-process/"
	NSPlnk2004 = "http://schemas.xmlsoap.org/ws/2004/03/partner-link/"
	NSDD       = "http://www.apache.org/ode/schemas/dd/2007/03"
	NSDDLegacy = "http://ode.fivesight.com/schemas/2006/06/27/dd"
	ImportWSDL = "http://schemas.xmlsoap.org/wsdl/"
	ImportXSD  = "http://www.w3.org/2001/XMLSchema"
)

const (
	// NSODEExtVar marks ODE external variables (a variable backed by a
	// JDBC table, configured in deploy.xml).
	NSODEExtVar = "http://ode.apache.org/externalVariables"
	// NSODEFunctions is ODE's namespace for XPath extension functions and
	// special variables ($ode:pid).
	NSODEFunctions = "http://www.apache.org/ode/type/extension"
	// NSActiveBPELFunctions is ActiveBPEL's (and bpel-g's) namespace for
	// XPath extension functions (abx:getProcessId()).
	NSActiveBPELFunctions = "http://www.activebpel.org/bpel/extension"
	// NSBPEL4RestLight is the namespace of ODE's REST extension activities.
	NSBPEL4RestLight = "http://www.apache.org/ode/bpel/extensions/bpel4restlight"
	// NSODEActivityRecovery is the namespace of ODE's activity recovery
	// (an invoke's <ext:failureHandling>).
	NSODEActivityRecovery = "http://ode.apache.org/activityRecovery"
)
