// Package b4p is BPEL4People 1.1's people activity in orchd: the
// extension (namespace NS) that compiles <b4p:peopleActivity> and runs
// it on the task engine (internal/humantask).
//
// It owns
//
//   - compiling a people activity (an <extensionActivity> child): its
//     inputVariable, outputVariable and isSkipable, and its task: an
//     inline <htd:task> (parsed with humantask.ParseHT) or a
//     <b4p:localTask reference="QName"> to a task of a deployed .ht file
//     (resolved when the activity runs). Remote tasks and notifications
//     are refused at deploy;
//   - running it as a waiting extension (plan.ExtensionWaiter): Start
//     creates the task from the input variable, and the instance waits,
//     stored as at a <receive>, until the task ends; People.Ended (the
//     task engine's Options.Ended) sends the task's end to the instance
//     (the task engine keeps the end pending in the task until that
//     succeeded, and sends it again after a restart), and Finish
//     continues it: a completed task's output is written to
//     the outputVariable, a skipped one (obsolete) completes the
//     activity with the outputVariable untouched, a failed one throws
//     the task's fault ({task port type namespace}fault name), and one
//     that ends in error or is exited throws b4p:nonRecoverableError;
//   - exiting the task of a people activity whose instance ended
//     (People.ExtensionWaitsEnded, the process engine's hook).
//
// It imports the compiler's extension API (compile, plan), exchange and
// humantask; it must not import the engine, the interpreter, the front
// door (soap, server), a store, or cmd.
package b4p
