package persist

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// fillScan stores n instances with IDs from NewID's layout, one
// millisecond apart from base, every third one Waiting (the others
// Completed), each with a correlation value "c<i>".
func fillScan(t testing.TB, st *Store, base time.Time, n, perCommit int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	var cps []*Checkpoint
	for i := range n {
		created := base.Add(time.Duration(i) * time.Millisecond)
		id := IDPrefix(created) + fmt.Sprintf("%016d", i)
		ids = append(ids, id)
		state := Completed
		if i%3 == 0 {
			state = Waiting
		}
		cps = append(cps, &Checkpoint{Instance: Instance{
			ID: id, Process: "{urn:p}P", State: state, Created: created, Updated: created,
			Frames: make([]byte, 96), Correlations: map[string]string{"byId": fmt.Sprintf("c%d", i)},
		}})
		if len(cps) == perCommit || i == n-1 {
			if err := st.Commit(cps...); err != nil {
				t.Fatal(err)
			}
			cps = cps[:0]
		}
	}
	return ids
}

func TestScanInstancesPages(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ids := fillScan(t, ts.Store, base, 100, 40)
	waiting := func(v *InstanceView) bool { return v.Err == nil && v.State == Waiting }
	tests := []struct {
		name  string
		sc    Scan
		match func(*InstanceView) bool
		want  []string // IDs, newest first, over all pages
		pages int
	}{
		{name: "all, pages of 30", sc: Scan{Limit: 30}, want: reversed(ids), pages: 4},
		{name: "waiting, capped scans", sc: Scan{Limit: 10, MaxScanned: 12}, match: waiting, want: everyThird(ids), pages: 9},
		{name: "created range", sc: Scan{From: IDPrefix(base.Add(10 * time.Millisecond)), Before: IDPrefix(base.Add(20 * time.Millisecond)), Limit: 4},
			want: reversed(ids[10:20]), pages: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			match := tc.match
			if match == nil {
				match = func(*InstanceView) bool { return true }
			}
			var got []string
			sc := tc.sc
			pages := 0
			for {
				pages++
				res, err := ts.ScanInstances(sc, func(v *InstanceView) bool {
					if !match(v) {
						return false
					}
					got = append(got, v.ID())
					return true
				})
				if err != nil {
					t.Fatal(err)
				}
				if sc.MaxScanned > 0 && res.Scanned > sc.MaxScanned {
					t.Fatalf("page read %d records, cap %d", res.Scanned, sc.MaxScanned)
				}
				if res.Next == "" {
					break
				}
				if pages > 200 {
					t.Fatal("paging does not end")
				}
				sc.Before = res.Next
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %d IDs %v\nwant %d %v", len(got), got, len(tc.want), tc.want)
			}
			if pages != tc.pages {
				t.Errorf("%d pages, want %d", pages, tc.pages)
			}
		})
	}
	// A view reads the header and correlations in place.
	_, err := ts.ScanInstances(Scan{Limit: 1}, func(v *InstanceView) bool {
		var corr string
		v.Correlations(func(name, key []byte) bool { corr = string(name) + "=" + string(key); return true })
		if v.ID() != ids[99] || !v.ProcessIs("{urn:p}P") || v.State != Waiting || corr != "byId=c99" || len(v.Frames()) != 96 ||
			!v.Created.Equal(base.Add(99*time.Millisecond)) {
			t.Errorf("view %s %s %v %q %d %v", v.ID(), v.Process(), v.State, corr, len(v.Frames()), v.Created)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestIDPrefixMatchesNewID(t *testing.T) {
	before := time.Now()
	id := NewID()
	after := time.Now().Add(time.Millisecond)
	if p := IDPrefix(before); id < p {
		t.Errorf("NewID %s sorts below IDPrefix of an earlier time %s", id, p)
	}
	if p := IDPrefix(after); id >= p {
		t.Errorf("NewID %s sorts at or above IDPrefix of a later time %s", id, p)
	}
}

func TestInstanceTimers(t *testing.T) {
	ts := newTestStore(t, Options{NoSync: true})
	due1, due2 := time.Unix(100, 0), time.Unix(50, 0)
	cp := &Checkpoint{Instance: Instance{ID: "A", Process: "{urn:p}P", State: Waiting},
		AddTimers: []Timer{{Due: due1, Tag: "x"}, {Due: due2}}}
	other := &Checkpoint{Instance: Instance{ID: "AB", Process: "{urn:p}P", State: Waiting}, AddTimers: []Timer{{Due: due1}}}
	if err := ts.Commit(cp, other); err != nil {
		t.Fatal(err)
	}
	got, err := ts.InstanceTimers("A")
	if err != nil || len(got) != 2 || !got[0].Due.Equal(due2) || !got[1].Due.Equal(due1) || got[1].Tag != "x" || got[0].InstanceID != "A" {
		t.Fatalf("timers %+v %v", got, err)
	}
}

func reversed(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

func everyThird(ids []string) []string {
	var out []string
	for i, id := range ids {
		if i%3 == 0 {
			out = append(out, id)
		}
	}
	slices.Reverse(out)
	return out
}

// BenchmarkScanInstances pages through a store of 500,000 instances
// (filled with commits of 10,000): the first page of 50, and, from the
// middle of the store, a page with a filter (state, process, correlation
// value) that one record in its reach matches, so it reads its cap of
// 10,000 records and returns a cursor.
func BenchmarkScanInstances(b *testing.B) {
	const n = 500_000
	ts := newTestStore(b, Options{NoSync: true, NoVerify: true})
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	start := time.Now()
	ids := fillScan(b, ts.Store, base, n, 10_000)
	b.Logf("filled %d instances in %v", n, time.Since(start))
	b.Run("first-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := ts.ScanInstances(Scan{Limit: 50, MaxScanned: 10_000}, func(v *InstanceView) bool { return v.Err == nil })
			if err != nil || res.Matched != 50 {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("deep-filtered", func(b *testing.B) {
		// From the middle of the store, a correlation value only one
		// record in the range has: the page reads its cap and stops.
		before := ids[n/2]
		want := []byte(fmt.Sprintf("c%d", n/2-5002)) // a waiting one
		b.ReportAllocs()
		for b.Loop() {
			found := 0
			res, err := ts.ScanInstances(Scan{Before: before, Limit: 50, MaxScanned: 10_000}, func(v *InstanceView) bool {
				if v.Err != nil || v.State != Waiting || !v.ProcessIs("{urn:p}P") {
					return false
				}
				hit := false
				v.Correlations(func(_, key []byte) bool { hit = string(key) == string(want); return !hit })
				if hit {
					found++
				}
				return hit
			})
			if err != nil || res.Scanned != 10_000 || res.Next == "" || found != 1 {
				b.Fatal(res, err, found)
			}
		}
	})
}
