//go:build unix

package diagram

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the test process has used (user and system),
// which a loaded machine does not inflate as it does wall-clock time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
