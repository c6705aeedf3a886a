package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// RunTool runs a Kafka 4.4 command-line tool (e2e/bin/tool.sh name args...),
// appends its command line and output to dir/tools.log, and returns the
// output (stdout and stderr together).
func RunTool(ctx context.Context, dir, name string, args ...string) (string, error) {
	if err := CheckBuilt("tools-4.4"); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(Root(), "bin", "tool.sh"), name}, args...)...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if f, ferr := os.OpenFile(filepath.Join(dir, "tools.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); ferr == nil {
		fmt.Fprintf(f, "$ %s %s  (%s, %v)\n%s\n", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), err, out)
		f.Close()
	}
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
