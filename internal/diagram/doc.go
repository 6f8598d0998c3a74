// Package diagram draws a process version as a picture: the BPEL block
// structure of a compiled plan (internal/process/plan) as nested boxes,
// laid out here and rendered as SVG that needs no script or style sheet
// to show (every colour is a presentation attribute, so the SVG also
// renders inside a page whose Content-Security-Policy forbids inline
// styles).
//
// # Basics
//
// New turns a *plan.Plan into a Layout: one Box per activity with an
// element (kind and name, the plan's activity id, coordinates), pseudo
// boxes for the branches of an if or a pick and for a scope's handlers
// (fault handlers, compensation, termination, event handlers, drawn as
// labelled compartments to the right of the scope's body), and one
// Arrow per flow link. A sequence stacks its children top to bottom; a
// flow, an if and a pick put theirs side by side; a while, repeatUntil
// and forEach are boxes marked as loops. Layout.SVG renders it with an
// Overlay: per activity, a fill, a stroke, a state and the lines of its
// tooltip. ForVersion builds the overlay of a version's statistics (a
// heat shade by time) from the management API's outline, ForInstance an
// instance's (each activity's status, the failing one red with its
// fault).
//
// Every activity's group carries id="act-N" and data-activity="N", N
// the plan's activity id (the ids of mgmt.ActivityStatus and
// mgmt.Activity), and data-state when an overlay gives one, so a page
// or a test finds an activity by id and reads its state. Every name
// and label is escaped.
//
// The layout is owned here rather than taken from a graph layout
// library: a nested-box layout of a block-structured language is one
// measuring pass and one placing pass over the tree (layered layouts
// such as Sugiyama's, which the Go libraries offer, fit graphs, not
// nested blocks; the flow links are the only edges, drawn between boxes
// already placed).
//
// # Caveats
//
// Text widths are estimated from the number of characters (no font
// metrics); long names are cut with an ellipsis and given in full in
// the tooltip. Constructs the compiler made (no element) are not drawn:
// their children take their place.
//
// It imports internal/process/plan (and expr, for the source of a
// condition) and internal/mgmt (the shapes its overlays are built from) and must never import the interpreter
// (internal/process/interp), the engine (internal/process), the
// compiler or anything that serves HTTP.
package diagram
