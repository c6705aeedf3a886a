package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// serveCheckedProduce answers Produce and the control plane, and reports on
// bad any Produce whose records are not all ones (another frame's bytes
// inside it) or any request it does not know.
func serveCheckedProduce(bad chan<- string) func(b *fakeBroker, c net.Conn) {
	return func(b *fakeBroker, c net.Conn) {
		r := bufio.NewReaderSize(c, 1<<20)
		var msg []byte
		for {
			h, m, err := readRequest(r, msg)
			if err != nil {
				return
			}
			msg = m
			var out []byte
			if kmsg.Key(h.Key) == kmsg.Produce {
				req := kmsg.NewPtrProduceRequest()
				req.SetVersion(h.Version)
				if err := req.ReadFrom(m[h.BodyAt:]); err != nil {
					bad <- fmt.Sprintf("produce %d: %v", h.Corr, err)
					return
				}
				for _, x := range req.Topics[0].Partitions[0].Records {
					if x != 1 {
						bad <- fmt.Sprintf("produce %d carries bytes of another frame", h.Corr)
						return
					}
				}
				resp := kmsg.NewPtrProduceResponse()
				resp.SetVersion(h.Version)
				resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}
				out = kafkaframe.AppendResponse(nil, h.Corr, resp)
			} else if out = b.controlPlaneAnswer(h); out == nil {
				bad <- fmt.Sprintf("request of key %d (correlation id %d): not a frame boundary?", h.Key, h.Corr)
				return
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// TestAskWaitsForStreamedRequest: an ask (a request of the proxy's own on
// the client's upstream connection: an authorization refresh, another
// instance's serve call) that comes while a large client request is being
// passed through upstream as it arrives goes upstream after that request,
// not into the middle of it, where the broker would read both as garbage
// and the client's request would never be answered.
func TestAskWaitsForStreamedRequest(t *testing.T) {
	t.Parallel()
	bad := make(chan string, 4)
	up := startFakeBroker(t, serveCheckedProduce(bad))
	p := startProxy(t, []string{up.addr()}, nil)
	c := dialRaw(t, p.addr)
	frame := produceFrame(1, 1<<20)
	if _, err := c.Write(frame[:256<<10]); err != nil {
		t.Fatal(err)
	}
	var cc *clientConn
	waitFor(t, "the request passed through as it arrives", func() error {
		p.mu.Lock()
		for x := range p.conns {
			cc = x
		}
		p.mu.Unlock()
		if cc == nil {
			return errNotYet
		}
		streaming := make(chan bool, 1)
		cc.onLoop(func() { streaming <- cc.reqStreamLeft > 0 })
		select {
		case s := <-streaming:
			if s {
				return nil
			}
		case <-time.After(time.Second):
		}
		return errNotYet
	})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	answer := cc.Ask(md)
	// The ask reaches the loop before the rest of the request does.
	time.Sleep(50 * time.Millisecond)
	if _, err := c.Write(frame[256<<10:]); err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte, 1)
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var head [8]byte
		if _, err := io.ReadFull(c, head[:]); err == nil {
			done <- head[:]
		}
		close(done)
	}()
	select {
	case a := <-answer:
		if a.Err != nil {
			t.Errorf("ask: %v", a.Err)
		}
	case msg := <-bad:
		t.Fatalf("broker: %s", msg)
	case <-time.After(5 * time.Second):
		t.Error("ask not answered")
	}
	select {
	case head, ok := <-done:
		if !ok {
			t.Fatal("the client's produce was not answered")
		}
		if corr := frameCorr(head); corr != 1 {
			t.Fatalf("client got correlation id %d", corr)
		}
	case msg := <-bad:
		t.Fatalf("broker: %s", msg)
	}
	select {
	case msg := <-bad:
		t.Fatalf("broker: %s", msg)
	default:
	}
}

// produceFrame is a Produce request frame of size record bytes.
func produceFrame(corr int32, size int) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = -1
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: bytes.Repeat([]byte{1}, size)}}}}
	id := "ask-stream"
	return kafkaframe.AppendRequest(nil, corr, &id, req)
}
