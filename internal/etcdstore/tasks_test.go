package etcdstore_test

import (
	"strconv"
	"sync"
	"testing"
)

// taskStore is what internal/humantask needs of a store.
type taskStore interface {
	Task(id string) ([]byte, bool, error)
	UpdateTask(id string, fn func(old []byte) ([]byte, error)) error
	Tasks(fn func(id string, rec []byte) bool) error
}

// TestTaskUpdatesSerialize: on both stores, concurrent updates of one
// task each see the other's record (the etcd store's compare-and-swap
// runs a losing update again), so no increment is lost; a nil record
// deletes the task.
func TestTaskUpdatesSerialize(t *testing.T) {
	for _, im := range impls(t) {
		t.Run(im.name, func(t *testing.T) {
			st := im.open(t).(taskStore)
			const workers, each = 4, 10
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						if err := st.UpdateTask("t1", func(old []byte) ([]byte, error) {
							n, _ := strconv.Atoi(string(old))
							return []byte(strconv.Itoa(n + 1)), nil
						}); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			if v, ok, err := st.Task("t1"); err != nil || !ok || string(v) != strconv.Itoa(workers*each) {
				t.Fatalf("t1 = %q %v %v, want %d", v, ok, err, workers*each)
			}
			if err := st.UpdateTask("t2", func([]byte) ([]byte, error) { return []byte("x"), nil }); err != nil {
				t.Fatal(err)
			}
			if err := st.UpdateTask("t1", func([]byte) ([]byte, error) { return nil, nil }); err != nil {
				t.Fatal(err)
			}
			var ids []string
			if err := st.Tasks(func(id string, _ []byte) bool { ids = append(ids, id); return true }); err != nil {
				t.Fatal(err)
			}
			if len(ids) != 1 || ids[0] != "t2" {
				t.Fatalf("tasks %v, want t2 only", ids)
			}
		})
	}
}
