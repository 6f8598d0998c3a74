package main

import "testing"

// guideMarker opens the command block of docs/first-bundle.md.
const guideMarker = "<!-- guide:"

// TestFirstBundleGuide runs docs/first-bundle.md's commands, as
// TestReadmeTour runs the README's: the guide's bundle is written, linted,
// broken, fixed, deployed and called in a copy of the repository, and
// each "# ->" line is checked, so the guide and its files cannot drift.
func TestFirstBundleGuide(t *testing.T) {
	t.Parallel() // long and mostly building or waiting: runs beside the other parallel tests at the end
	steps, err := readBlock("../../docs/first-bundle.md", guideMarker)
	if err != nil {
		t.Fatal(err)
	}
	runTour(t, "docs/first-bundle.md", steps)
}
