package loglimit

import (
	"sync"
	"testing"
	"time"
)

// The first line goes out, the next ones within Every are held and
// counted, and the first after Every tells how many were held.
func TestLimiter(t *testing.T) {
	l := Limiter{Every: 10 * time.Second}
	start := time.Unix(1000, 0).UnixNano()
	steps := []struct {
		at   time.Duration
		ok   bool
		held int64
	}{
		{0, true, 0},
		{time.Second, false, 0},
		{9 * time.Second, false, 0},
		{10 * time.Second, true, 2},
		{11 * time.Second, false, 0},
		{30 * time.Second, true, 1},
		{41 * time.Second, true, 0},
	}
	for i, s := range steps {
		ok, held := l.Allow(start + int64(s.at))
		if ok != s.ok || held != s.held {
			t.Fatalf("step %d at +%v: (%v, %d), want (%v, %d)", i, s.at, ok, held, s.ok, s.held)
		}
	}
}

// Callers racing at the same instant write one line; the others are
// counted for the next.
func TestLimiterConcurrent(t *testing.T) {
	l := Limiter{Every: time.Minute}
	now := time.Unix(1000, 0).UnixNano()
	var wg sync.WaitGroup
	var mu sync.Mutex
	lines := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _ := l.Allow(now); ok {
				mu.Lock()
				lines++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if lines != 1 {
		t.Fatalf("%d lines at one instant, want 1", lines)
	}
	if ok, held := l.Allow(now + int64(time.Minute)); !ok || held != 15 {
		t.Fatalf("after a minute: (%v, %d), want (true, 15)", ok, held)
	}
}
