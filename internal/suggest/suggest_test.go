package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"in-memorry", "in-memory", 1},
		{"timout", "timeout", 1},
		{"kitten", "sitting", 3},
		{"Concat", "concat", 0},
		{"", "abc", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"in-memory", "process-events", "provide", "invoke", "cleanup", "timeout"}
	for _, c := range []struct {
		name, want string
		ok         bool
	}{
		{"in-memorry", "in-memory", true},
		{"timout", "timeout", true},
		{"provde", "provide", true},
		{"zzz", "", false},
		{"persistence", "", false},
	} {
		got, ok := Closest(c.name, known)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if _, ok := Closest("x", nil); ok {
		t.Error("Closest with nothing known found a name")
	}
}
