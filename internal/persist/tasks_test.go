package persist

import (
	"errors"
	"testing"
)

// TestTasks: task records are created, replaced and deleted in one
// transaction each, an error of the update leaves the record, and they
// survive a reopen.
func TestTasks(t *testing.T) {
	ts := newTestStore(t, Options{})
	put := func(id, v string) {
		t.Helper()
		if err := ts.UpdateTask(id, func(old []byte) ([]byte, error) { return []byte(v), nil }); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "one")
	put("b", "two")
	boom := errors.New("boom")
	if err := ts.UpdateTask("a", func(old []byte) ([]byte, error) {
		if string(old) != "one" {
			t.Errorf("old %q", old)
		}
		return []byte("lost"), boom
	}); !errors.Is(err, boom) {
		t.Fatalf("the update's error: %v", err)
	}
	ts.reopen()
	if v, ok, err := ts.Task("a"); err != nil || !ok || string(v) != "one" {
		t.Fatalf("a after a failed update and a reopen: %q %v %v", v, ok, err)
	}
	if err := ts.UpdateTask("b", func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := ts.Tasks(func(id string, rec []byte) bool { ids = append(ids, id+"="+string(rec)); return true }); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != "a=one" {
		t.Fatalf("tasks %v, want a=one only (b deleted)", ids)
	}
	if _, ok, _ := ts.Task("b"); ok {
		t.Fatal("b still there")
	}
}
