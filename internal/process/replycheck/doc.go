// Package replycheck checks a partner's answer against the schemas of
// its operation's output message before a process takes it: every part
// the bundle's schemas declare, with internal/xsd (the one schema
// validator), its element's name, structure, attributes and the
// lexical forms of its simple-typed leaves. The compiler decides which
// invokes are checked (plan.ReplySchema, deploy.xml's
// orchd:validateReplies); the interpreter calls Check on each answer and
// raises what it returns as bpel:invalidVariables.
//
// It owns no state and starts no goroutines. It imports exchange, plan
// and xsd only; it must never import the interpreter, the engine, the
// compiler, soap or cmd.
package replycheck
