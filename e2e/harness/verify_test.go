package harness

import (
	"strings"
	"testing"
)

func updatesOf(key string, counts ...int64) []Update {
	us := make([]Update, len(counts))
	for i, c := range counts {
		us[i] = Update{Key: key, Count: c, Offset: int64(i)}
	}
	return us
}

func TestVerifyCounts(t *testing.T) {
	tests := []struct {
		name     string
		expected map[string]int64
		updates  []Update
		eos      bool
		wantErr  string // substring; empty means pass
	}{
		{"exact", map[string]int64{"g00": 3}, updatesOf("g00", 1, 2, 3), true, ""},
		{"two keys interleaved", map[string]int64{"a": 2, "b": 1},
			append(append(updatesOf("a", 1), updatesOf("b", 1)...), updatesOf("a", 1, 2)[1:]...), true, ""},
		{"duplicate under eos", map[string]int64{"g00": 3}, updatesOf("g00", 1, 2, 2, 3), true, "duplicated update"},
		{"lost under eos", map[string]int64{"g00": 3}, updatesOf("g00", 1, 3), true, "lost update"},
		{"short under eos", map[string]int64{"g00": 3}, updatesOf("g00", 1, 2), true, "want exactly 1..3"},
		{"too many under eos", map[string]int64{"g00": 2}, updatesOf("g00", 1, 2, 3), true, "want exactly 1..2"},
		{"missing key", map[string]int64{"g00": 1, "g01": 1}, updatesOf("g00", 1), true, "key g01: no output"},
		{"unknown key", map[string]int64{"g00": 1}, append(updatesOf("g00", 1), updatesOf("zz", 1)...), false, "never produced"},
		{"alos overcount passes", map[string]int64{"g00": 3}, updatesOf("g00", 1, 2, 3, 2, 3, 4), false, ""},
		{"alos lost", map[string]int64{"g00": 3}, updatesOf("g00", 1, 2), false, "final count 2 < 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyCounts(tc.expected, tc.updates, tc.eos)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("want error containing %q, got none", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
