package suggest

import "strings"

// Distance is the Levenshtein distance between a and b: the fewest
// single-character insertions, deletions and substitutions that turn one
// into the other. It compares runes, ignoring case.
func Distance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns the name of known nearest to name, and whether it is
// near enough to be a likely typo: at most a third of the longer name's
// length away (at least 1, at most 3 edits). Ties go to the earlier name
// of known.
func Closest(name string, known []string) (string, bool) {
	best, bestD := "", -1
	for _, k := range known {
		if d := Distance(name, k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD < 0 {
		return "", false
	}
	limit := max(len([]rune(name)), len([]rune(best))) / 3
	limit = min(max(limit, 1), 3)
	return best, bestD <= limit
}

// DidYouMean is "; did you mean X?" when a name of known is near name,
// else "".
func DidYouMean(name string, known []string) string {
	if k, ok := Closest(name, known); ok {
		return "; did you mean " + k + "?"
	}
	return ""
}
