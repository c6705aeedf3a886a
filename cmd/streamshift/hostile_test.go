package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHostileRequests drives a running streamshift (kfake upstream) with
// mutated requests of every key it handles itself (hostile_gen_test.go)
// from four connections at once, and after each batch checks what an
// operator relies on (hostileInstance.check): the process lives, /readyz
// and /metrics answer 200, a client still produces, consumes and joins a
// group, its RSS stays within idle + 2 × limits.max-buffered-bytes, no
// panic was recovered. A batch after which a check fails is saved as a
// frames file (testdata/hostile/found/, or STREAMSHIFT_HOSTILE_OUT) that
// TestHostileReplay sends again.
//
// It runs 60 s by default (STREAMSHIFT_HOSTILE_DURATION, a Go duration,
// for longer runs) with a seed from the clock (STREAMSHIFT_HOSTILE_SEED
// replays one), printed first.
func TestHostileRequests(t *testing.T) {
	duration := 60 * time.Second
	if s := os.Getenv("STREAMSHIFT_HOSTILE_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("STREAMSHIFT_HOSTILE_DURATION: %v", err)
		}
		duration = d
	}
	if testing.Short() {
		duration = min(duration, 10*time.Second)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STREAMSHIFT_HOSTILE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STREAMSHIFT_HOSTILE_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (STREAMSHIFT_HOSTILE_SEED=%d replays it), %v", seed, seed, duration)
	out := os.Getenv("STREAMSHIFT_HOSTILE_OUT")
	if out == "" {
		out = filepath.Join("testdata", "hostile", "found")
	}

	in := startHostile(t)
	// The served group, with a 10 kB endpoint: describes of it are large.
	if c, err := dialRaw(in.bootstrap); err == nil {
		if _, err := c.exchange(requestFrame(servedJoin("hz-member", 10_000), 1, nil), 10*time.Second); err != nil {
			t.Fatalf("join %s: %v", hostileGroup, err)
		}
		c.close()
	}

	const workers = 4
	batchTime := 5 * time.Second
	stats := newHostileStats()
	deadline := time.Now().Add(duration)
	var failures int
	for batch := 1; time.Now().Before(deadline); batch++ {
		// Each worker's requests follow from its seed alone (not from the
		// answers), so a batch is regenerated when it is saved instead of
		// held: a repeated list of long strings is tens of MB.
		var sent [workers]int
		var wg sync.WaitGroup
		end := time.Now().Add(min(batchTime, time.Until(deadline)))
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := newHostileGen(t, workerSeed(seed, batch, w))
				var c *rawConn
				defer func() {
					if c != nil {
						c.close()
					}
				}()
				for corr := int32(1); time.Now().Before(end); corr++ {
					if c == nil {
						var err error
						if c, err = dialRaw(in.bootstrap); err != nil {
							stats.add("dial", "failed")
							time.Sleep(100 * time.Millisecond)
							continue
						}
					}
					key, f := g.next(corr)
					sent[w]++
					_, err := c.exchange(f, 2*time.Second)
					switch {
					case err == nil:
						stats.add(key.Name(), "answered")
						continue
					case strings.Contains(err.Error(), "timeout"):
						stats.add(key.Name(), "held (no answer in 2s)")
					default:
						stats.add(key.Name(), "connection closed")
					}
					c.close()
					c = nil
				}
			}()
		}
		wg.Wait()
		if failed := in.check(batch); len(failed) > 0 {
			failures++
			var frames [][]byte
			for w, n := range sent {
				g := newHostileGen(t, workerSeed(seed, batch, w))
				for corr := int32(1); corr <= int32(n); corr++ {
					_, f := g.next(corr)
					frames = append(frames, f)
				}
			}
			path := filepath.Join(out, fmt.Sprintf("seed-%d-batch-%d.frames", seed, batch))
			comment := fmt.Sprintf("TestHostileRequests seed %d batch %d (%d frames): after it\n%s", seed, batch, len(frames), strings.Join(failed, "\n"))
			if err := writeFrames(path, comment, frames); err != nil {
				t.Errorf("saving the finding: %v", err)
			}
			t.Errorf("batch %d (%d requests, saved in %s):\n  %s", batch, len(frames), path, strings.Join(failed, "\n  "))
			if failures >= 3 || in.gone() {
				break
			}
		}
	}
	t.Logf("outcomes by key:\n%s", stats)
	t.Logf("RSS: idle %d MiB, now %d MiB, peak %d MiB (budget: idle + 2 × %d MiB)", in.rssIdle>>20, in.rss("VmRSS")>>20, in.rss("VmHWM")>>20, hostileMaxBuffered>>20)
	t.Logf("streamshift's warnings and errors, by message and reason:\n%s", in.log.tally())
}

func workerSeed(seed uint64, batch, worker int) uint64 {
	return seed + uint64(batch)*1000 + uint64(worker)
}

// TestHostileReplay sends every frames file of testdata/hostile (the
// issue #42 reproductions, and any finding saved under found/) to a
// running streamshift, each file on a connection of its own (redialled
// when the proxy closes it), and checks the instance as the suite does.
func TestHostileReplay(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.frames"))
	found, _ := filepath.Glob(filepath.Join("testdata", "hostile", "found", "*.frames"))
	files = append(files, found...)
	if len(files) == 0 {
		t.Fatal("no frames files in testdata/hostile")
	}
	in := startHostile(t)
	for i, path := range files {
		frames, err := readFrames(path)
		if err != nil {
			t.Fatal(err)
		}
		var c *rawConn
		answered, closed := 0, 0
		for _, f := range frames {
			if c == nil {
				if c, err = dialRaw(in.bootstrap); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.exchange(f, 5*time.Second); err != nil {
				closed++
				c.close()
				c = nil
				continue
			}
			answered++
		}
		if c != nil {
			c.close()
		}
		t.Logf("%s: %d frames, %d answered, %d ended their connection", path, len(frames), answered, closed)
		if failed := in.check(i + 1); len(failed) > 0 {
			t.Errorf("after %s:\n  %s", path, strings.Join(failed, "\n  "))
		}
	}
}

// hostileStats counts the outcomes of the suite's requests by key.
type hostileStats struct {
	mu sync.Mutex
	n  map[string]map[string]int
}

func newHostileStats() *hostileStats { return &hostileStats{n: map[string]map[string]int{}} }

func (s *hostileStats) add(key, outcome string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key] == nil {
		s.n[key] = map[string]int{}
	}
	s.n[key][outcome]++
}

func (s *hostileStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.n))
	for k := range s.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-24s", k)
		outs := make([]string, 0, len(s.n[k]))
		for o, n := range s.n[k] {
			outs = append(outs, fmt.Sprintf("%s %d", o, n))
		}
		sort.Strings(outs)
		b.WriteString(strings.Join(outs, ", ") + "\n")
	}
	return b.String()
}
