package proxy

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// responsePayload is the body size and content the broker sends for corr:
// between a few bytes and 6 MiB, most of it beyond one gnet read.
func responsePayload(corr int32) []byte {
	r := rand.New(rand.NewPCG(uint64(corr), 7))
	size := 16
	switch r.IntN(3) {
	case 0:
		size = r.IntN(4 << 10)
	case 1:
		size = (64 << 10) + r.IntN(512<<10)
	case 2:
		size = (1 << 20) + r.IntN(5<<20)
	}
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// serveStream answers the proxy's control plane, and every Produce with a
// response frame carrying the CRC of the request it received followed by
// a payload whose size and bytes follow from the correlation id (see
// responsePayload). A client id of "slow-upstream" makes it pause before
// each answer, so the proxy's upstream socket fills.
func serveStream(b *fakeBroker, c net.Conn) {
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		h, msg, err := readRequest(r, nil)
		if err != nil {
			return
		}
		out := b.controlPlaneAnswer(h)
		if kmsg.Key(h.Key) == kmsg.Produce {
			payload := responsePayload(h.Corr)
			out = binary.BigEndian.AppendUint32(nil, uint32(8+len(payload)))
			out = binary.BigEndian.AppendUint32(out, uint32(h.Corr))
			out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(msg))
			out = append(out, payload...)
		}
		if out == nil {
			return
		}
		if h.ClientID != nil && *h.ClientID == "slow-upstream" {
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// TestLargeFramesPassThroughIntact drives large pass-through requests and
// responses (the ones the proxy streams while they arrive) through several
// connections sharing the proxy's loops, pipelined
// and mixed with small and rewritten ones, with the upstream or the client
// reading slowly on some connections so that sockets fill mid-frame. Every
// request must reach the broker byte for byte and every response must reach
// its client byte for byte, in order.
func TestLargeFramesPassThroughIntact(t *testing.T) {
	t.Parallel()
	b := startFakeBroker(t, serveStream)
	p := startProxy(t, []string{b.addr()}, func(o *Options) {
		o.Log = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	})

	roles := []string{"plain", "plain", "slow-upstream", "slow-client", "plain"}
	var wg sync.WaitGroup
	for i, role := range roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			streamConversation(t, p.addr, role, int32(i*1000))
		}()
	}
	wg.Wait()
}

// streamConversation pipelines requests of mixed sizes on one connection and
// checks each response.
func streamConversation(t *testing.T, addr, role string, firstCorr int32) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	const n = 24
	crcs := make(chan uint32, n)
	var sendErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := rand.New(rand.NewPCG(uint64(firstCorr), 11))
		for i := range int32(n) {
			corr := firstCorr + i
			var frame []byte
			if i%5 == 4 {
				// A response that is rewritten between streamed ones.
				req := apiVersionsReq(3)
				frame = kafkaframe.AppendRequest(nil, corr, &role, req)
				crcs <- 0
			} else {
				size := r.IntN(8 << 10)
				if i%2 == 0 {
					size = (512 << 10) + r.IntN(6<<20)
				}
				records := make([]byte, size)
				for j := range records {
					records[j] = byte(r.Uint32())
				}
				req := kmsg.NewPtrProduceRequest()
				req.Version = 9 // below v10, the response is not rewritten
				req.Acks = -1
				req.TimeoutMillis = 5000
				req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: records}}}}
				frame = kafkaframe.AppendRequest(nil, corr, &role, req)
				crcs <- crc32.ChecksumIEEE(frame[4:])
			}
			if _, err := c.Write(frame); err != nil {
				sendErr = err
				return
			}
		}
	}()
	br := bufio.NewReaderSize(c, 4<<10)
	for i := range int32(n) {
		if role == "slow-client" {
			time.Sleep(30 * time.Millisecond) // the proxy's writes to this client fill its socket
		}
		corr := firstCorr + i
		var size [4]byte
		if _, err := io.ReadFull(br, size[:]); err != nil {
			t.Errorf("%s: response %d: %v", role, corr, err)
			return
		}
		msg := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(br, msg); err != nil {
			t.Errorf("%s: response %d: %v", role, corr, err)
			return
		}
		if got := int32(binary.BigEndian.Uint32(msg)); got != corr {
			t.Errorf("%s: response with correlation id %d, want %d", role, got, corr)
			return
		}
		wantCRC := <-crcs
		if wantCRC == 0 {
			continue // the ApiVersions answer
		}
		if got := binary.BigEndian.Uint32(msg[4:]); got != wantCRC {
			t.Errorf("%s: request %d reached the broker altered (crc %08x, sent %08x)", role, corr, got, wantCRC)
			return
		}
		if want := responsePayload(corr); string(msg[8:]) != string(want) {
			t.Errorf("%s: response %d altered (%d bytes, broker sent %d)", role, corr, len(msg)-8, len(want))
			return
		}
	}
	<-done
	if sendErr != nil {
		t.Errorf("%s: send: %v", role, sendErr)
	}
}
