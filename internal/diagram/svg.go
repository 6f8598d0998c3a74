package diagram

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Mark is what an overlay says of one activity.
type Mark struct {
	// State is the activity's data-state ("completed", "failed", or a
	// heat level "heat-3"); empty leaves it out.
	State string
	// Fill and Stroke colour its box (CSS colours); empty keeps the
	// defaults.
	Fill, Stroke string
	// Strong draws its outline thick (the failing activity).
	Strong bool
	// Note is a short line shown in a leaf's box (counts and times, a
	// fault).
	Note string
	// Title are the lines of its tooltip, after its kind, name and
	// position.
	Title []string
}

// Overlay marks activities by plan activity id. The zero value draws
// the bare diagram.
type Overlay struct {
	// Caption is a line under the picture's title (what the overlay
	// shows).
	Caption string
	Marks   map[int]Mark
}

// The colours of the bare diagram.
const (
	colText     = "#1f2328"
	colMuted    = "#57606a"
	colBox      = "#ffffff"
	colEdge     = "#8c959f"
	colBranch   = "#f6f8fa"
	colHandler  = "#fff8e6"
	colLoop     = "#0969da"
	colLink     = "#8250df"
	captionRoom = 34 // the title and caption above the root box
)

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// esc escapes s for SVG text and attribute values, dropping what XML
// cannot carry.
func esc(s string) string {
	return xmlEscaper.Replace(strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF && r != utf8.RuneError {
			return r
		}
		return -1
	}, s))
}

// cut shortens s to maxChars characters with an ellipsis.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= maxChars {
		return s
	}
	r := []rune(s)
	return string(r[:maxChars-1]) + "…"
}

// SVG writes the layout as an SVG document with ov's marks.
func (l *Layout) SVG(w io.Writer, ov Overlay) error {
	bw := bufio.NewWriter(w)
	h := l.H + captionRoom
	// Wide enough for the caption, whose text is not cut.
	width := max(l.W, 2*margin+utf8.RuneCountInString(ov.Caption)*charW)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" class="orchd-diagram" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" font-family="sans-serif" font-size="12">`+"\n",
		width, h, width, h, esc("process "+l.Title))
	fmt.Fprintf(bw, "<title>%s</title>\n", esc("process "+l.Title))
	fmt.Fprintf(bw, `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="%s"/></marker>`+
		`<marker id="link" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="%s"/></marker></defs>`+"\n", colEdge, colLink)
	fmt.Fprintf(bw, `<text x="%d" y="18" font-size="14" font-weight="bold" fill="%s">%s</text>`+"\n", margin, colText, esc(l.Title))
	if ov.Caption != "" {
		fmt.Fprintf(bw, `<text class="caption" x="%d" y="32" fill="%s">%s</text>`+"\n", margin, colMuted, esc(ov.Caption))
	}
	fmt.Fprintf(bw, `<g transform="translate(0 %d)">`+"\n", captionRoom)
	if len(l.Boxes) > 0 {
		l.box(bw, 0, ov)
	}
	for _, a := range l.Arrows {
		fmt.Fprintf(bw, `<g class="link" data-link="%s" data-from="%d" data-to="%d"><title>link %s</title>`+
			`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5" marker-end="url(#link)"/>`+
			`<text x="%d" y="%d" font-size="10" fill="%s" text-anchor="middle">%s</text></g>`+"\n",
			esc(a.Link), l.Boxes[a.From].ID, l.Boxes[a.To].ID, esc(a.Link), a.X1, a.Y1, a.X2, a.Y2, colLink,
			(a.X1+a.X2)/2, (a.Y1+a.Y2)/2-3, colLink, esc(cut(a.Link)))
	}
	bw.WriteString("</g>\n</svg>\n")
	return bw.Flush()
}

// box writes box i and what it holds, as a group.
func (l *Layout) box(w *bufio.Writer, i int, ov Overlay) {
	b := l.Boxes[i]
	var m Mark
	if b.Role == RoleActivity {
		m = ov.Marks[b.ID]
		fmt.Fprintf(w, `<g id="act-%d" class="act %s" data-activity="%d" data-kind="%s"`, b.ID, esc(b.Kind), b.ID, esc(b.Kind))
		if m.State != "" {
			fmt.Fprintf(w, ` data-state="%s"`, esc(m.State))
		}
		w.WriteString(">")
	} else {
		fmt.Fprintf(w, `<g class="%s">`, b.Role)
	}
	title := b.Kind + " " + b.Name
	if b.Role != RoleActivity {
		title = b.Label
	} else if b.Label != "" {
		title += "\n" + b.Label
	}
	if b.Detail != "" {
		title += "\n" + b.Detail
	}
	if b.Pos != "" {
		title += "\nat " + b.Pos
	}
	for _, t := range m.Title {
		title += "\n" + t
	}
	fmt.Fprintf(w, "<title>%s</title>", esc(strings.TrimSpace(title)))

	fill, stroke, dash, width := colBox, colEdge, "", "1"
	switch b.Role {
	case RoleBranch:
		fill, dash = colBranch, ` stroke-dasharray="4 3"`
	case RoleHandler:
		fill, dash = colHandler, ` stroke-dasharray="2 2"`
	}
	if b.Loop {
		stroke = colLoop
	}
	if m.Fill != "" {
		fill = m.Fill
	}
	if m.Stroke != "" {
		stroke = m.Stroke
	}
	if m.Strong {
		width = "3"
	}
	rx := 6
	if !b.Leaf {
		rx = 3
	}
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" rx="%d" fill="%s" stroke="%s" stroke-width="%s"%s/>`,
		b.X, b.Y, b.W, b.H, rx, esc(fill), esc(stroke), width, dash)
	if b.Leaf {
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="%s"><tspan font-weight="bold">%s</tspan>`, b.X+pad, b.Y+17, colText, esc(b.Kind))
		if b.Name != "" {
			fmt.Fprintf(w, ` %s`, esc(cut(b.Name)))
		}
		w.WriteString("</text>")
		if b.Detail != "" {
			fmt.Fprintf(w, `<text x="%d" y="%d" font-size="11" fill="%s">%s</text>`, b.X+pad, b.Y+32, colMuted, esc(cut(b.Detail)))
		}
		if m.Note != "" {
			fmt.Fprintf(w, `<text class="note" x="%d" y="%d" font-size="11" fill="%s">%s</text>`, b.X+pad, b.Y+47, colText, esc(cut(m.Note)))
		}
	} else {
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="%s">`, b.X+pad, b.Y+15, colText)
		switch {
		case b.Role != RoleActivity:
			fmt.Fprintf(w, `<tspan font-style="italic">%s</tspan>`, esc(cut(b.Label)))
		default:
			if b.Loop {
				fmt.Fprintf(w, `<tspan fill="%s">↻ </tspan>`, colLoop)
			}
			fmt.Fprintf(w, `<tspan font-weight="bold">%s</tspan>`, esc(b.Kind))
			if b.Name != "" {
				fmt.Fprintf(w, " %s", esc(cut(b.Name)))
			}
			if b.Label != "" {
				fmt.Fprintf(w, ` <tspan fill="%s">%s</tspan>`, colMuted, esc(cut(b.Label)))
			}
		}
		w.WriteString("</text>")
	}
	w.WriteString("\n")
	kids := l.kids[i]
	for j, k := range kids {
		if l.seqs[i] && j > 0 {
			a, c := l.Boxes[kids[j-1]], l.Boxes[k]
			fmt.Fprintf(w, `<line class="next" x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" marker-end="url(#arrow)"/>`+"\n",
				a.X+a.W/2, a.Y+a.H, a.X+a.W/2, c.Y, colEdge)
		}
		l.box(w, k, ov)
	}
	w.WriteString("</g>\n")
}
