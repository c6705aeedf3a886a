//go:build e2e

package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkOneAddressReplaced: behind one address, the rolling steps end by
// replacement by identity (issue #41), never by a session expiry: the
// instances' logs, over every start of each, show no member of the smoke
// group fenced because its session expired (but one that had left and
// waited for its successor: below), and at least one replacement
// ("replaced by identity": the takeover's, s1 on c1's state directory
// replacing c1 wherever c1's connections were; or the hand-back's departed
// member removed for its successor's held JoinGroup). Both are written to
// replacements.md in out, beside report.md's step times.
func checkOneAddressReplaced(t *testing.T, out string) error {
	logs, err := filepath.Glob(filepath.Join(out, "streamshift-s*", "streamshift-*.log"))
	if err != nil {
		return err
	}
	// A streams member that left on close waits for its successor (its
	// tasks kept, "its tasks wait for its successor") until its session
	// ends: a successor whose JVM starts later than that (a loaded machine)
	// finds it fenced by its session, by design (docs/fast-roll.md). Such
	// expiries are listed, not failed: the bug of issue #41 was a member
	// that never left (a classic member) and whose close never reached the
	// owner.
	type logLine struct{ where, line string }
	var lines []logLine
	departed := map[string]bool{}
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "SmokeTest") {
				continue
			}
			lines = append(lines, logLine{filepath.Base(filepath.Dir(name)) + "/" + filepath.Base(name), line})
			if strings.Contains(line, "its tasks wait for its successor") {
				departed[logMember(line)] = true
			}
		}
	}
	var replaced, expired, departedExpired []string
	for _, l := range lines {
		entry := l.where + ": " + clip(l.line, 400)
		switch {
		case strings.Contains(l.line, "replaced by identity"), strings.Contains(l.line, "its successor's JoinGroup is held for the hand-back"):
			replaced = append(replaced, entry)
		case strings.Contains(l.line, "the member session expired") && departed[logMember(l.line)]:
			departedExpired = append(departedExpired, entry)
		case strings.Contains(l.line, "the member session expired"):
			expired = append(expired, entry)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s: replacements by identity and session expiries of SmokeTest\n\n", t.Name())
	fmt.Fprintf(&sb, "%d replacement lines, %d session expiries, %d of members that had left and waited for a successor slower than their session\n\n", len(replaced), len(expired), len(departedExpired))
	for _, l := range append(append(replaced, expired...), departedExpired...) {
		fmt.Fprintf(&sb, "- %s\n", l)
	}
	if err := os.WriteFile(filepath.Join(out, "replacements.md"), []byte(sb.String()), 0o644); err != nil {
		return err
	}
	t.Logf("SmokeTest: %d replacement lines, %d session expiries, %d of departed members (replacements.md)", len(replaced), len(expired), len(departedExpired))
	if len(expired) > 0 {
		return fmt.Errorf("%d members of the smoke group were fenced at their session expiry, not replaced by their successor (replacements.md): %s", len(expired), expired[0])
	}
	if len(replaced) == 0 {
		return fmt.Errorf("no step of the smoke group ended by replacement by identity (no \"replaced by identity\" in %v)", logs)
	}
	return nil
}

// stepEndings reads the instances' logs for how the smoke group's
// members left, one step at a time: each call returns the lines not
// returned before.
type stepEndings struct {
	dir  string
	seen map[string]bool
}

// since returns the new lines that replaced a member by identity (or held
// a hand-back's successor for its departed predecessor), and those that
// fenced one: at its session expiry, or at a disconnect or unseen expiry
// (its successor joined later than K heartbeat intervals after its stop).
func (e *stepEndings) since() (matched, expired []string, err error) {
	logs, err := filepath.Glob(filepath.Join(e.dir, "streamshift-s*", "streamshift-*.log"))
	if err != nil {
		return nil, nil, err
	}
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, nil, err
		}
		where := filepath.Base(filepath.Dir(name)) + "/" + filepath.Base(name)
		for _, line := range strings.Split(string(b), "\n") {
			// The flight recorder's line repeats a fencing's reason.
			if !strings.Contains(line, "SmokeTest") || strings.Contains(line, `"component":"capture"`) || e.seen[line] {
				continue
			}
			switch {
			case strings.Contains(line, "replaced by identity"), strings.Contains(line, "its successor's JoinGroup is held for the hand-back"):
				matched = append(matched, where+": "+clip(logMsg(line), 300))
			case strings.Contains(line, "the member session expired"), strings.Contains(line, "(disconnect expiry)") && strings.Contains(line, "fenced from the group"),
				strings.Contains(line, "(unseen expiry)") && strings.Contains(line, "fenced from the group"):
				expired = append(expired, where+": "+clip(logMsg(line), 300))
			default:
				continue
			}
			e.seen[line] = true
		}
	}
	return matched, expired, nil
}

// logMsg is a log line's time and message (the whole line if it is not JSON).
func logMsg(line string) string {
	var l struct {
		Time    string `json:"time"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(line), &l) != nil || l.Message == "" {
		return line
	}
	return l.Time + " " + l.Message
}

// logMember is the "member" field of a coordinator log line ("" if none).
func logMember(line string) string {
	var l struct {
		Member string `json:"member"`
	}
	if json.Unmarshal([]byte(line), &l) != nil {
		return ""
	}
	return l.Member
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
