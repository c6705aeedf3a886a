package main

import (
	"fmt"
	"os"
)

// runCmd is replaced by the proxy's run command (issue 3).
func runCmd(args []string) int {
	fmt.Fprintln(os.Stderr, "streamshift run: not built yet")
	return 2
}
