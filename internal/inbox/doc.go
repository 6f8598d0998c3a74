// Package inbox is the console's task inbox: the pages where a person
// signs in with their own credentials from the people directory (never
// the admin token), lists the tasks their roles let them see (filters:
// state, priority, process, due), opens one, reads its input, and
// claims, starts, releases, skips, fails or completes it, the output
// filled in a form generated from the task's output schema
// (internal/taskform) and validated against it (internal/xsd) before
// the task engine takes it.
//
// Pages are rendered on the server with html/template (every value
// escaped) and carry no script, so the console's Content-Security-Policy
// holds. A session is a random token in an HttpOnly, SameSite=Strict
// cookie (Secure over TLS), kept in memory and ended by sign-out or 8
// hours idle; every form post carries the session's CSRF token and, when
// the browser sends one, an Origin of the same host.
//
// It imports humantask (the task engine and its identities), taskform,
// xsd and the WSDL stage (internal/process/wsdl, to find a task's output
// element in its bundle); never the process engine, the front door or
// the management API.
package inbox
