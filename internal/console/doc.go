// Package console is orchd's web console: a few HTML pages, embedded with
// their script and style sheet, that show and operate a running orchd
// through its management API (internal/admin, routes in internal/mgmt).
//
// The pages are shells rendered with html/template; the script fills
// them from the JSON API with fetch and keeps them live (the API's
// server-sent events at /api/v1/events when available, polling
// otherwise). Nothing is fetched from elsewhere: no CDN, no fonts, no
// build step. Actions send the operator's token (kept in the browser's
// sessionStorage) as "Authorization: Bearer"; without one the console is
// read-only.
//
// Pages, under Options.Prefix (default /console/):
//
//	/console/                        processes, their versions and counters, and the bundles (deploy errors first)
//	/console/process?name=&version=  one process: its diagram shaded by time with counts, mean and p99 times and faults
//	                                 (the API's SVG), its activity outline, versions, retire/activate
//	/console/instances?<filters>     the instance list with the API's filters and paging
//	/console/instance?id=            one instance: state, its path on the diagram (the failing activity red), where
//	                                 it is, variables, timeline, actions
//	/console/static/...              the script and the style sheet
//	/console/inbox/...               the people's task inbox, when Options.Inbox is set (internal/inbox)
//
// The package imports nothing of orchd but internal/mgmt's names for the
// actions; it never talks to the engine directly.
package console
