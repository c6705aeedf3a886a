package proxy

import (
	"bufio"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInflightFetchesCapped: a client that pipelines Fetches gets at most
// maxInflightFetches of them sent upstream at a time (gnet reads every
// answer into memory, read by the client or not), and every Fetch is still
// answered, in order. The fake broker answers each Fetch 20 ms after reading
// it and counts the Fetches it holds unanswered.
func TestInflightFetchesCapped(t *testing.T) {
	t.Parallel()
	var held, most atomic.Int32
	b := startFakeBroker(t, func(b *fakeBroker, c net.Conn) { serveDelayedFetches(b, c, &held, &most) })
	p := startProxy(t, []string{b.addr()}, nil)

	rc := dialRaw(t, p.addr)
	const n = 8
	for i := range int32(n) {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		req.ReplicaID = -1
		req.MaxWaitMillis = 500
		req.MaxBytes = 50 << 20
		rc.send(i, req)
	}
	for i := range int32(n) {
		if got := frameCorr(rc.recv()); got != i {
			t.Fatalf("Fetch answer with correlation id %d, want %d", got, i)
		}
	}
	if m := most.Load(); m > maxInflightFetches || m == 0 {
		t.Fatalf("the broker held %d Fetches of one connection at once, want 1..%d", m, maxInflightFetches)
	}
}

// serveDelayedFetches answers the proxy's control-plane requests at once
// and each Fetch 20 ms after it arrived, tracking how many it holds.
func serveDelayedFetches(b *fakeBroker, c net.Conn, held, most *atomic.Int32) {
	var wmu sync.Mutex
	write := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		_, _ = c.Write(b)
	}
	fetches := make(chan int32, 64)
	defer close(fetches)
	go func() {
		for corr := range fetches {
			time.Sleep(20 * time.Millisecond)
			held.Add(-1)
			out := binary.BigEndian.AppendUint32(nil, 4+1024)
			out = binary.BigEndian.AppendUint32(out, uint32(corr))
			write(append(out, make([]byte, 1024)...))
		}
	}()
	r := bufio.NewReader(c)
	for {
		h, _, err := readRequest(r, nil)
		if err != nil {
			return
		}
		if kmsg.Key(h.Key) == kmsg.Fetch {
			n := held.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			fetches <- h.Corr
			continue
		}
		out := b.controlPlaneAnswer(h)
		if out == nil {
			return
		}
		write(out)
	}
}
