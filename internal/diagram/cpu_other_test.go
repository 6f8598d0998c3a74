//go:build !unix

package diagram

import "time"

// cpuTime is unknown here: 0.
func cpuTime() time.Duration { return 0 }
