package humantask

// Store keeps task records: opaque bytes under the task's id. The
// instance store implements it (*persist.Store in its tasks bucket,
// *etcdstore.Store under its tasks/ prefix); NewMemStore is the store of
// an orchd with no instance store. Its methods are safe for concurrent
// use.
type Store interface {
	// Task returns the record of id; ok is false when there is none.
	Task(id string) (rec []byte, ok bool, err error)
	// UpdateTask replaces the record of id with what fn returns for the
	// current one (nil when there is none) in one transaction: on a
	// cluster two nodes updating one task run one after the other, fn
	// seeing the other's record (fn may run more than once). fn returning
	// a nil record deletes the task; an error leaves it as it is and is
	// returned.
	UpdateTask(id string, fn func(old []byte) ([]byte, error)) error
	// Tasks calls fn with every record until fn returns false.
	Tasks(fn func(id string, rec []byte) bool) error
}
