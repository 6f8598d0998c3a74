package humantask

import "sync"

// MemStore is a Store in memory: the tasks of an orchd with no instance
// store, which a restart forgets.
type MemStore struct {
	mu   sync.Mutex
	recs map[string][]byte
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{recs: map[string][]byte{}} }

// Task implements Store.
func (m *MemStore) Task(id string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[id]
	return r, ok, nil
}

// UpdateTask implements Store.
func (m *MemStore) UpdateTask(id string, fn func(old []byte) ([]byte, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	nv, err := fn(m.recs[id])
	if err != nil {
		return err
	}
	if nv == nil {
		delete(m.recs, id)
		return nil
	}
	m.recs[id] = nv
	return nil
}

// Tasks implements Store.
func (m *MemStore) Tasks(fn func(id string, rec []byte) bool) error {
	m.mu.Lock()
	cp := make(map[string][]byte, len(m.recs))
	for k, v := range m.recs {
		cp[k] = v
	}
	m.mu.Unlock()
	for k, v := range cp {
		if !fn(k, v) {
			return nil
		}
	}
	return nil
}
