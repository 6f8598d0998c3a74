// Package events carries the runtime's instance events to listeners, the
// way Apache ODE's BpelEventListener did, without ever slowing an
// exchange down.
//
// The runtime (internal/process) builds an Event only when a Dispatcher
// is configured and the process enables the event's category (deploy.xml
// <process-events>, see Category); Emit then offers it to each
// listener's bounded queue without blocking: a full queue drops the event
// and counts it. Each listener has its own goroutine that takes the
// queued events in batches and hands them to Listener.Deliver under a
// time budget. A listener whose delivery exceeds the budget is
// blacklisted: it is cut off for good (its queue is no longer fed), the
// cause is logged once, a metric counts it, and the dispatcher goes on
// with the others; the stuck delivery is abandoned, never awaited.
//
// Built in: File (JSON lines, one event a line), Webhook (a JSON array
// per batch POSTed to a URL, retried within the budget) and Timeline (the
// last events of each instance in bounded memory, and a live stream to
// subscribers that are dropped when they fall behind, for the management
// API and the console). Any other sink implements Listener.
//
// Metrics: orchd_events_emitted_total, orchd_events_dropped_total{listener,
// reason} (reason "queue_full" or "blacklisted"),
// orchd_events_delivered_total{listener}, orchd_events_delivery_errors_total
// {listener} and orchd_events_listeners_blacklisted_total{listener}.
//
// It imports nothing of orchd's.
package events
