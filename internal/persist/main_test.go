package persist

import (
	"fmt"
	"os"
	"testing"
)

// childEnv makes the test binary act as a second process (see runChild)
// instead of running the tests.
const (
	childEnv     = "ORCHD_PERSIST_TEST_CHILD"
	childPathEnv = "ORCHD_PERSIST_TEST_PATH"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode, os.Getenv(childPathEnv)))
	}
	os.Exit(m.Run())
}

// runChild is the second process of the cross-process tests. It reports on
// stdout and returns the exit code.
func runChild(mode, path string) int {
	switch mode {
	case "open":
		// What orchd does at start: Open, and exit non-zero on error.
		st, err := Open(path, Options{})
		if err != nil {
			fmt.Println(err)
			return 3
		}
		st.Close()
		fmt.Println("opened")
		return 0
	case "fsize":
		return fileSizeLimitChild(path)
	}
	fmt.Println("unknown child mode", mode)
	return 2
}
