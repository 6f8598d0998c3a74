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
// GET (and HEAD) requests are open: anyone who can reach the address can
// read processes, instances and their variables, and the console (which
// is read-only without a token). Every other method, on the API and on
// the console's paths alike, needs
// "Authorization: Bearer <token>" with Options.Token, compared in
// constant time: a missing or wrong token is 401 with
// "WWW-Authenticate: Bearer" and a reason. With no token configured the
// API is read-only and every mutation is 403. Keep the API on loopback or
// behind a proxy (orchd serve --admin-listen) when reads must be private.
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
