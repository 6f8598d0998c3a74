// Package humantask is orchd's task engine: WS-HumanTask 1.1 tasks and
// notifications that people work on, created by process instances and
// answered back to them.
//
// It owns
//
//   - the task definitions of a bundle (htdefs.go: the .ht files'
//     htd:humanInteractions, parsed with file and line; htconfig.go:
//     WSO2 BPS's htconfig.xml, which service publishes each task and
//     where its callback goes), deployed and versioned with the bundle,
//     or as a WSO2 BPS task package of their own (package.go: .ht files
//     and htconfig.xml without a deploy.xml);
//   - the people directory (people.go: Directory, and FileDirectory, a
//     file of users with bcrypt hashes and groups, reloaded on change),
//     and the resolution of logical people groups and the WS-HT roles;
//   - the task lifecycle (lifecycle.go: created, ready, reserved, in
//     progress, completed, failed, error, exited, obsolete, suspended)
//     and its operations, each checked against the caller's roles;
//   - deadlines and escalations (deadline.go) on durable timers: the
//     deadlines are rows of the task record in the store, scheduled on an
//     injected Clock;
//   - the binding a process invokes a task through (partner.go: an
//     exchange.Partner per published task service) and the callback that
//     answers the waiting instance when the task ends.
//
// Tasks are stored through the narrow Store interface (the instance
// store: *persist.Store on bbolt, *etcdstore.Store on etcd); the engine
// keeps no task in memory between calls, so on a cluster any node serves
// any task.
//
// It imports exchange, events, and the xmldoc stage for line-aware
// parsing; it must not import the process engine or interpreter, the
// front door (soap, server), the stores' implementations, the management
// packages or cmd.
package humantask
