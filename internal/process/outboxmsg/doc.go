// Package outboxmsg is the payload of a stored outbox record: the
// message of a one-way call the interpreter enqueued (RELIABLE invokes of
// persistent processes), what the call carries besides it (Extras: the
// session's header blocks, the ReplyTo of a process waiting for a
// callback, an assigned endpoint's reference parameters), and the span of
// the run that enqueued it. The interpreter encodes it in the checkpoint
// that enqueues the call; the engine's outbox decodes it when it sends.
//
// The payload: a count of parts, each a (name, XML) pair of persist
// strings; then, when the call carries extras, the tag 'x' and the header
// blocks, a ReplyTo flag and ReplyTo, and the reference parameters, each
// list in epr.Encode's form; then, when the run was traced, the tag 't'
// and the trace id (16 bytes), span id (8) and flags (1). A payload
// without a trailer has none of it.
//
// It owns this format only. It imports exchange, persist's string codec,
// epr and xmlparse, and must not import the interpreter or the engine.
package outboxmsg
