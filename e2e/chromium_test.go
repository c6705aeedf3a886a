//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
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
// default profile hands its command to the first one and exits. A headless
// chromium has been seen to hang for good on a machine at load 90 (a
// screenshot that never came, 18 minutes): each attempt is bounded, its
// whole process group (crashpad helpers hold its output pipe open) is killed
// at the bound, and a hung attempt is retried.
func chromiumRun(ctx context.Context, chromium string, more ...string) ([]byte, error) {
	var err error
	for attempt := 1; attempt <= chromiumAttempts; attempt++ {
		var out []byte
		if out, err = chromiumOnce(ctx, chromium, more...); err == nil || ctx.Err() != nil {
			return out, err
		}
		err = fmt.Errorf("attempt %d of %d: %w", attempt, chromiumAttempts, err)
	}
	return nil, err
}

// chromiumAttempts and chromiumAttemptTimeout bound one page load: a load
// takes seconds, up to a minute on a loaded machine.
const (
	chromiumAttempts       = 3
	chromiumAttemptTimeout = 2 * time.Minute
)

func chromiumOnce(ctx context.Context, chromium string, more ...string) ([]byte, error) {
	profile, err := os.MkdirTemp("", "e2e-chromium-")
	if err != nil {
		return nil, fmt.Errorf("chromium profile: %w", err)
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(ctx, chromiumAttemptTimeout)
	defer cancel()
	args := append(append(slices.Clone(chromiumFlags), "--user-data-dir="+profile), more...)
	cmd := exec.CommandContext(ctx, chromium, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
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
