package main

import "testing"

// TestSoftMemoryLimit: the limit is the README's promise (idle plus twice
// the budget) while the proxy's own state is small, and never leaves less
// room above the largest live heap (state plus a full budget) than the
// state's size, so the collector cannot run continuously.
func TestSoftMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name                         string
		base, budget, live, buffered uint64
		want                         int64
	}{
		{"idle", 8 * mib, 64 * mib, 20 * mib, 0, (8 + 128) * mib},
		{"budget full", 8 * mib, 64 * mib, 84 * mib, 64 * mib, (8 + 128) * mib},
		{"large state", 8 * mib, 64 * mib, 300 * mib, 10 * mib, (8 + 2*290 + 64) * mib},
		{"buffered counted above live", 8 * mib, 64 * mib, 10 * mib, 40 * mib, (8 + 128) * mib},
	} {
		got := softMemoryLimit(tc.base, tc.budget, tc.live, tc.buffered)
		if got != tc.want {
			t.Errorf("%s: softMemoryLimit = %d MiB, want %d MiB", tc.name, got/mib, tc.want/mib)
		}
		state := tc.live - min(tc.live, tc.buffered)
		if room := got - int64(state+tc.budget); room < int64(state) {
			t.Errorf("%s: %d MiB above the largest live heap, less than the state's %d MiB", tc.name, room/mib, state/mib)
		}
	}
}
