package events

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// File is a listener that appends each event to a file as one line of
// JSON (JSON lines), flushed after every batch.
type File struct {
	path string
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
}

// OpenFile opens (creating, appending) the JSON-lines file at path.
func OpenFile(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("events file: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	return &File{path: path, f: f, w: w, enc: json.NewEncoder(w)}, nil
}

// Name is "file:" and the path.
func (l *File) Name() string { return "file:" + l.path }

// Deliver writes the batch and flushes it to the file.
func (l *File) Deliver(_ context.Context, batch []Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("events file %s is closed", l.path)
	}
	for i := range batch {
		if err := l.enc.Encode(&batch[i]); err != nil {
			return fmt.Errorf("events file %s: %w", l.path, err)
		}
	}
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("events file %s: %w", l.path, err)
	}
	return nil
}

// Close flushes and closes the file (after the dispatcher's Close).
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("events file %s: %w", l.path, err)
	}
	return nil
}
