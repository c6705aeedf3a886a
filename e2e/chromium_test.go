//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
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

// chromiumDOM loads url in headless chromium and returns its DOM after the
// page's scripts ran.
func chromiumDOM(ctx context.Context, chromium, url string) (string, error) {
	dom, err := exec.CommandContext(ctx, chromium, append(chromiumFlags, "--dump-dom", url)...).Output()
	if err != nil {
		return "", fmt.Errorf("chromium --dump-dom %s: %w", url, err)
	}
	return string(dom), nil
}

// chromiumScreenshot saves a screenshot of url as the PNG file shot.
func chromiumScreenshot(ctx context.Context, chromium, url, shot string) error {
	if out, err := exec.CommandContext(ctx, chromium, append(chromiumFlags, "--screenshot="+shot, url)...).CombinedOutput(); err != nil {
		return fmt.Errorf("chromium --screenshot %s: %w: %s", url, err, out)
	}
	return nil
}
