// Package admin serves orchd's management API: the HTTP+JSON routes
// under /api/v1/ that internal/mgmt's doc.go lists, over an
// mgmt.Backend, plus the web console (an http.Handler it is given) at
// /console/.
//
// # What it owns
//
// Routing, parameter parsing (a bad parameter is a 400 naming it),
// limits (a listing page holds at most 1000 instances, a bulk action
// touches at most 10000, a bundle upload is at most 64 MiB: 413 beyond),
// the mapping of the Backend's sentinel errors to statuses (one place:
// statusOf), bulk actions, the server-sent event stream and
// authentication.
//
// # Authentication
//
// Access (access.go) decides, for every request before routing: the
// Host header must name the listener (Access.Hosts, AnyIP; 421
// otherwise: DNS rebinding); with a token configured (Access.Token, the
// admin token, and Access.ReadToken, which only reads) every API
// request, reads and the event stream included, needs
// "Authorization: Bearer <token>", compared in constant time (401 with
// "WWW-Authenticate: Bearer" and a reason when missing or wrong; 403 for
// a mutation with the read token); with none, reads are open and every
// mutation is 403 (read-only). Access.Off turns the API and the
// console off (403): orchd serve sets it for a listener that is not
// loopback when no token is configured, whichever flag opened it
// (Exposed, the one rule; ListenerAccess). A token shorter than
// MinTokenLen is refused at start. With the API on, the console's GET
// pages are shells without data: they need no token, only the Host
// check.
// docs/security.md has the whole picture.
//
// # The event stream
//
// GET /api/v1/events is text/event-stream: "event: instance" with each
// runtime event's JSON as the Stream delivers it (the Stream is bounded
// and drops subscribers that fall behind, so a slow client never blocks
// the runtime), "event: stats" with the process list every second, and
// a comment line as heartbeat. It ends when the client goes away or
// Options.Done closes (orchd shutting down).
//
// It imports mgmt and events, nothing else of orchd's; nothing imports
// it but cmd/orchd.
package admin
