// Package htclient is the WS-HumanTask client API over SOAP where WSO2
// BPS clients call it: HumanTaskClientAPIAdmin at
// /services/HumanTaskClientAPIAdmin, its operations the WS-HT 1.1 API's
// (namespace API): getMyTaskAbstracts, getMyTasks, getTaskInfo,
// getInput, getOutput, claim, start, stop, release, complete, fail,
// skip, delegate, forward, suspend, resume, setPriority, addComment and
// getComments, answered with their response elements, and refused with
// the API's faults (illegalArgumentFault, illegalAccessFault,
// illegalStateFault, illegalOperationFault), whose elements
// (illegalArgument, illegalAccess, illegalState, illegalOperation) are
// the SOAP fault's detail.
//
// GET Path?wsdl serves the WSDL 1.1 document/literal description of
// exactly those operations (HumanTaskClientAPIAdmin.wsdl, embedded, with
// its schema inline), under WSO2's service, port and binding names, its
// soap:address the address the request reached (internal/publicurl, as
// for the processes' ?wsdl), so SOAP toolkits generate clients from it.
// operations (ops.go) is the one list of the operations the WSDL names.
//
// The caller is a person of the people directory, authenticated by HTTP
// Basic or a WS-Security UsernameToken with a plain-text password, never
// the admin token; every operation runs as that person, so the task
// engine's role checks decide what they see and do.
//
// It imports humantask and publicurl only; the envelope is read with
// etree under a size bound (decode, fuzzed).
package htclient
