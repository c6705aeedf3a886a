//go:build e2e

package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkOneAddressReplaced: behind one address, the rolling steps end by
// replacement by identity (issue #41), never by a session expiry: the
// instances' logs, over every start of each, show no member of the smoke
// group fenced because its session expired, and at least one replacement
// ("replaced by identity": the takeover's, s1 on c1's state directory
// replacing c1 wherever c1's connections were; or the hand-back's departed
// member removed for its successor's held JoinGroup). Both are written to
// replacements.md in out, beside report.md's step times.
func checkOneAddressReplaced(t *testing.T, out string) error {
	logs, err := filepath.Glob(filepath.Join(out, "streamshift-s*", "streamshift-*.log"))
	if err != nil {
		return err
	}
	var replaced, expired []string
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "SmokeTest") {
				continue
			}
			where := filepath.Base(filepath.Dir(name)) + "/" + filepath.Base(name)
			switch {
			case strings.Contains(line, "replaced by identity"), strings.Contains(line, "its successor's JoinGroup is held for the hand-back"):
				replaced = append(replaced, where+": "+clip(line, 400))
			case strings.Contains(line, "the member session expired"):
				expired = append(expired, where+": "+clip(line, 400))
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s: replacements by identity and session expiries of SmokeTest\n\n", t.Name())
	fmt.Fprintf(&sb, "%d replacement lines, %d session expiries\n\n", len(replaced), len(expired))
	for _, l := range append(replaced, expired...) {
		fmt.Fprintf(&sb, "- %s\n", l)
	}
	if err := os.WriteFile(filepath.Join(out, "replacements.md"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	t.Logf("SmokeTest: %d replacement lines, %d session expiries (replacements.md)", len(replaced), len(expired))
	if len(expired) > 0 {
		return fmt.Errorf("%d members of the smoke group were fenced at their session expiry, not replaced by their successor (replacements.md): %s", len(expired), expired[0])
	}
	if len(replaced) == 0 {
		return fmt.Errorf("no step of the smoke group ended by replacement by identity (no \"replaced by identity\" in %v)", logs)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
