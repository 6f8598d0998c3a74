// Package actstats keeps a process version's statistics per activity:
// how many times each completed in the instances timed for the outline
// and the diagram (the engine's sampling), their summed time and a
// histogram of their times (for the 99th percentile), and how many
// times each faulted in any instance.
//
// A Table is indexed by plan activity id and updated with atomic adds
// only, by every run of the version at once; a histogram is allocated
// the first time its activity is timed, so a version whose instances
// are never timed keeps a few counters per activity.
//
// It imports nothing of orchd; the interpreter (internal/process/interp)
// records into it and the engine reads it.
package actstats
