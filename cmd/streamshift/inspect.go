package main

import (
	"fmt"
	"os"
)

// inspectCmd is replaced by the classicstreams inspect command (issue 4).
func inspectCmd(args []string) int {
	fmt.Fprintln(os.Stderr, "streamshift inspect: not built yet")
	return 2
}
