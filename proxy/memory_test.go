package proxy

import (
	"net"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// TestStalledUpstreamBoundsMemory: requests are forwarded as they arrive,
// whatever the upstream socket takes, so an upstream that stops reading
// (here: never reads) must not make the proxy hold a client's requests
// without bound: past MaxFrameBytes + 2*BufferHighWater held for the
// connection it is closed, and the rejection is counted.
func TestStalledUpstreamBoundsMemory(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var held []net.Conn // accepted and never read
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	const maxFrame, hw = 64 << 10, 16 << 10
	p := startProxy(t, []string{ln.Addr().String()}, func(o *Options) {
		o.MaxFrameBytes = maxFrame
		o.BufferHighWater = hw
		o.DialTimeout = 200 * time.Millisecond
	})

	// acks=0 Produce frames take no slot, so neither the in-flight cap nor
	// a response ever stops them: only the memory cap can.
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = 0
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: make([]byte, 32<<10)}}}}
	id := "raw"
	frame := kafkaframe.AppendRequest(nil, 1, &id, req)
	rc := dialRaw(t, p.addr)
	// Far more than the kernel's socket buffers on both sides plus the cap.
	sent, closed := 0, false
	for sent < 512<<20 {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := rc.Write(frame); err != nil {
			closed = true
			break
		}
		sent += len(frame)
	}
	if !closed {
		t.Fatalf("wrote %d MiB to a proxy whose upstream reads nothing without being disconnected", sent>>20)
	}
	var m dto.Metric
	c, err := p.m.frameRejected.GetMetricWithLabelValues("client sent too much while the proxy held its earlier requests")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.GetCounter().GetValue() != 1 {
		t.Fatalf("rejections for holding too much: %v, want 1 (sent %d MiB)", m.GetCounter().GetValue(), sent>>20)
	}
}
