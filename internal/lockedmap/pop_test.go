package lockedmap

import (
	"sync"
	"testing"
)

func TestPop(t *testing.T) {
	var mu sync.Mutex
	m := map[string]int{"a": 1, "b": 2}
	if v := Pop(&mu, m, "a"); v != 1 {
		t.Fatalf("Pop a = %d, want 1", v)
	}
	if _, ok := m["a"]; ok || len(m) != 1 {
		t.Fatalf("after Pop a: %v, want only b", m)
	}
	if v := Pop(&mu, m, "a"); v != 0 {
		t.Fatalf("second Pop a = %d, want 0", v)
	}
	if !mu.TryLock() {
		t.Fatal("Pop left the mutex locked")
	}
}
