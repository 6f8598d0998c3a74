// Package htclient is the WS-HumanTask client API over SOAP where WSO2
// BPS clients call it: HumanTaskClientAPIAdmin at
// /services/HumanTaskClientAPIAdmin, its operations the WS-HT 1.1 API's
// (namespace API): getMyTaskAbstracts, getMyTasks, getTaskInfo,
// getInput, getOutput, claim, start, stop, release, complete, fail,
// skip, delegate, forward, suspend, resume, setPriority, addComment and
// getComments, answered with their response elements, and refused with
// the API's faults (illegalArgumentFault, illegalAccessFault,
// illegalStateFault, illegalOperationFault) as the fault's detail.
//
// The caller is a person of the people directory, authenticated by HTTP
// Basic or a WS-Security UsernameToken with a plain-text password, never
// the admin token; every operation runs as that person, so the task
// engine's role checks decide what they see and do.
//
// It imports humantask only; the envelope is read with etree under a
// size bound (decode, fuzzed).
package htclient
