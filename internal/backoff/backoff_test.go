package backoff

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The waits double from Min up to Max, each within a fifth below its
// step; Reset starts again from Min. No clock: the
// waits are values, the jitter a seeded source.
func TestBackoff(t *testing.T) {
	steps := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for seed := range uint64(50) {
		b := Backoff{Min: 100 * time.Millisecond, Max: time.Second, Rand: rand.New(rand.NewPCG(seed, 1))}
		for i, step := range steps {
			step *= time.Millisecond
			if d := b.Next(); d > step || d < step-step/5 {
				t.Fatalf("seed %d, wait %d: %v, want within [%v, %v]", seed, i, d, step-step/5, step)
			}
		}
		b.Reset()
		if d := b.Next(); d > 100*time.Millisecond || d < 80*time.Millisecond {
			t.Fatalf("seed %d, after Reset: %v, want within [80ms, 100ms]", seed, d)
		}
	}
}

// Loops that failed together do not retry together: with their own
// sources, the waits of loops in step spread, and the same seed gives
// the same waits (the jitter is the source's, nothing else).
func TestBackoffSpreads(t *testing.T) {
	first := map[time.Duration]bool{}
	for seed := range uint64(50) {
		b := Backoff{Min: time.Second, Max: 8 * time.Second, Rand: rand.New(rand.NewPCG(seed, 2))}
		first[b.Next()] = true
	}
	if len(first) < 40 {
		t.Fatalf("50 loops' first waits took %d values: no jitter", len(first))
	}
	waits := func() []time.Duration {
		b := Backoff{Min: time.Second, Max: 8 * time.Second, Rand: rand.New(rand.NewPCG(7, 7))}
		return []time.Duration{b.Next(), b.Next(), b.Next(), b.Next(), b.Next()}
	}
	if a, b := waits(), waits(); a[0] != b[0] || a[4] != b[4] {
		t.Fatalf("same seed, other waits: %v, %v", a, b)
	}
}

func TestBackoffZero(t *testing.T) {
	var b Backoff
	if d := b.Next(); d != 0 {
		t.Fatalf("zero Backoff waits %v, want 0", d)
	}
}
