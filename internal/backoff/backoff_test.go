package backoff

import (
	"testing"
	"time"
)

// The waits double from Min up to Max, each within a fifth below its
// step, and spread: loops that fail together do not retry together.
func TestBackoff(t *testing.T) {
	steps := []time.Duration{100, 200, 400, 800, 1000, 1000}
	seen := map[time.Duration]bool{}
	for range 50 {
		b := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
		for i, step := range steps {
			step *= time.Millisecond
			d := b.Next()
			if d > step || d < step-step/5 {
				t.Fatalf("wait %d: %v, want within [%v, %v]", i, d, step-step/5, step)
			}
			if i == 0 {
				seen[d] = true
			}
		}
		b.Reset()
		if d := b.Next(); d > 100*time.Millisecond {
			t.Fatalf("after Reset: %v", d)
		}
		b.Longest()
		if d := b.Next(); d < 800*time.Millisecond {
			t.Fatalf("after Longest: %v", d)
		}
	}
	if len(seen) < 10 {
		t.Fatalf("50 first waits took %d values: no jitter", len(seen))
	}
}
