package harness

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// VerifyCounts checks the output of CountApp against the true input counts.
//
// Exactly-once (read_committed output): each key's updates, in offset order, are exactly
// 1, 2, ..., N with N the true count: a repeat is a duplicated update, a jump a lost one.
// At-least-once: every key reaches at least N (reprocessing after a crash may overcount, but
// nothing may be lost).
// Keys in the output that were never produced are always an error.
func VerifyCounts(expected map[string]int64, updates []Update, exactlyOnce bool) error {
	seqs := map[string][]Update{}
	for _, u := range updates {
		seqs[u.Key] = append(seqs[u.Key], u)
	}
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(expected)) {
		want := expected[k]
		seq := seqs[k]
		if len(seq) == 0 {
			problems = append(problems, fmt.Sprintf("key %s: no output, want count %d", k, want))
			continue
		}
		last := seq[len(seq)-1].Count
		if !exactlyOnce {
			if last < want {
				problems = append(problems, fmt.Sprintf("key %s: final count %d < %d produced (lost updates)", k, last, want))
			}
			continue
		}
		for i, u := range seq {
			if u.Count == int64(i)+1 {
				continue
			}
			prev := int64(0)
			if i > 0 {
				prev = seq[i-1].Count
			}
			kind := "lost update(s)"
			if u.Count <= prev {
				kind = "duplicated update"
			}
			problems = append(problems, fmt.Sprintf("key %s: %s: update #%d is %d after %d (partition %d offset %d)",
				k, kind, i+1, u.Count, prev, u.Partition, u.Offset))
			break
		}
		if last != want || int64(len(seq)) != want {
			problems = append(problems, fmt.Sprintf("key %s: %d updates ending at %d, want exactly 1..%d", k, len(seq), last, want))
		}
	}
	var extra []string
	for k := range seqs {
		if _, ok := expected[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		problems = append(problems, fmt.Sprintf("key %s: in the output but never produced", k))
	}
	if len(problems) == 0 {
		return nil
	}
	const show = 10
	more := ""
	if len(problems) > show {
		more = fmt.Sprintf("\n  ... and %d more", len(problems)-show)
		problems = problems[:show]
	}
	mode := "at-least-once"
	if exactlyOnce {
		mode = "exactly-once"
	}
	return fmt.Errorf("%s output check failed:\n  %s%s", mode, strings.Join(problems, "\n  "), more)
}
