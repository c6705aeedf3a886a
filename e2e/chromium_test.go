//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// chromiumFlags are those of every headless page load: a fixed window so the
// screenshots are comparable between runs.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1500,1000"}

// needChromium returns the path of Debian's chromium, which the tests that
// check a page in a browser need. Without it the test is skipped, except
// under CI (.ci/run installs it), where a missing chromium fails the test:
// CI must never pass a browser check it did not run.
func needChromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("chromium is required under CI: %v", err)
	}
	t.Skipf("chromium not installed (apt-get install -y chromium): %v", err)
	return ""
}

// chromiumRun runs chromium with chromiumFlags and more, in a profile
// directory of its own: tests run in parallel, and a second chromium on the
// default profile hands its command to the first one and exits.
//
// A headless chromium has hung for 15 minutes on a page load under load 80
// (the test then hit go test's timeout): each attempt is bounded by
// chromiumAttempt, its process group killed, and one more attempt made.
func chromiumRun(ctx context.Context, chromium string, more ...string) ([]byte, error) {
	out, err := chromiumRunOnce(ctx, chromium, more...)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		out, err = chromiumRunOnce(ctx, chromium, more...)
	}
	return out, err
}

// chromiumAttempt bounds one chromium run (a page load takes seconds).
const chromiumAttempt = 3 * time.Minute

func chromiumRunOnce(ctx context.Context, chromium string, more ...string) ([]byte, error) {
	profile, err := os.MkdirTemp("", "e2e-chromium-")
	if err != nil {
		return nil, fmt.Errorf("chromium profile: %w", err)
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(ctx, chromiumAttempt)
	defer cancel()
	args := append(append(slices.Clone(chromiumFlags), "--user-data-dir="+profile), more...)
	cmd := exec.CommandContext(ctx, chromium, args...)
	// chromium's zygote and renderers are its children: kill them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return out, fmt.Errorf("chromium %v: killed after %s: %w", more, chromiumAttempt, ctx.Err())
	}
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, stderr.Bytes())
	}
	return out, nil
}

// chromiumDOM loads url in headless chromium and returns its DOM after the
// page's scripts ran.
func chromiumDOM(ctx context.Context, chromium, url string) (string, error) {
	dom, err := chromiumRun(ctx, chromium, "--dump-dom", url)
	if err != nil {
		return "", fmt.Errorf("chromium --dump-dom %s: %w", url, err)
	}
	return string(dom), nil
}

// chromiumScreenshot saves a screenshot of url as the PNG file shot.
func chromiumScreenshot(ctx context.Context, chromium, url, shot string) error {
	if out, err := chromiumRun(ctx, chromium, "--screenshot="+shot, url); err != nil {
		return fmt.Errorf("chromium --screenshot %s: %w: %s", url, err, out)
	}
	return nil
}
