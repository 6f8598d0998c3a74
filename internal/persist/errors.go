package persist

import "errors"

// Sentinel errors. Every error the Store returns wraps one of these or an
// underlying I/O error, so callers test them with errors.Is.
var (
	// ErrNotFound is returned by Store.Instance when no instance has the
	// given ID.
	ErrNotFound = errors.New("persist: not found")

	// ErrLocked is returned by Open when another process (usually another
	// orchd) holds the data file's lock for longer than Options.LockTimeout.
	// The message names the file: "data file <path> is locked by another
	// process (another orchd?)".
	ErrLocked = errors.New("persist: data file locked")

	// ErrSchemaTooNew is returned by Open when the data file was written by a
	// newer orchd whose schema version this build does not know. The file is
	// left untouched.
	ErrSchemaTooNew = errors.New("persist: schema too new")

	// ErrCorrupt is returned by Open (and by reads, if damage is found later)
	// when the data file cannot be read as an orchd store: bbolt rejects it,
	// panics while reading it, or a record does not decode. The message names
	// the file.
	ErrCorrupt = errors.New("persist: data file corrupt")

	// ErrInvalid is returned by Commit when a checkpoint is malformed (empty
	// or oversized instance ID, unknown state, a route or timer that names a
	// different instance, ...). Nothing of that Commit is written.
	ErrInvalid = errors.New("persist: invalid checkpoint")

	// ErrConflict is returned by Commit when a checkpoint adds a route whose
	// key is already bound to a different instance. Nothing of that Commit is
	// written.
	ErrConflict = errors.New("persist: route key bound to another instance")

	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("persist: store closed")
)

// fileError is an error about the data file with an exact, human message
// that still matches both its kind (a sentinel above) and its cause (a bbolt
// or OS error, or nil) with errors.Is.
type fileError struct {
	msg   string
	kind  error
	cause error
}

func (e *fileError) Error() string { return e.msg }

func (e *fileError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}
