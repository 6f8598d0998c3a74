package humantask

import (
	"encoding/json"
	"errors"
	"fmt"
)

// recordFormat is the first byte of a stored task record: version 1 is
// the Task as JSON. A record of a later format is refused, never
// misread.
const recordFormat = 1

func encodeTask(t *Task) ([]byte, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	return append([]byte{recordFormat}, b...), nil
}

func decodeTask(rec []byte) (*Task, error) {
	if len(rec) == 0 {
		return nil, errors.New("empty task record")
	}
	if rec[0] != recordFormat {
		return nil, fmt.Errorf("task record format %d (this orchd reads %d)", rec[0], recordFormat)
	}
	t := &Task{}
	if err := json.Unmarshal(rec[1:], t); err != nil {
		return nil, fmt.Errorf("task record: %w", err)
	}
	return t, nil
}
