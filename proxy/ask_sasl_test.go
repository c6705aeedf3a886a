package proxy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// serveSASL is a broker that authenticates like Kafka's
// SaslServerAuthenticator: from a SaslHandshake (a first authentication or
// a KIP-368 re-authentication) until it answered the exchange's last
// SaslAuthenticate (rounds of them) it takes no other request, and any
// other fails the exchange and closes the connection (reported on bad).
// Outside an exchange it answers Produce, Metadata and ApiVersions.
func serveSASL(rounds int, bad chan<- string) func(b *fakeBroker, c net.Conn) {
	return func(b *fakeBroker, c net.Conn) {
		r := bufio.NewReader(c)
		var msg []byte
		left := 0 // SaslAuthenticate rounds left in the running exchange
		for {
			h, m, err := readRequest(r, msg)
			if err != nil {
				return
			}
			msg = m
			var resp kmsg.Response
			switch key := kmsg.Key(h.Key); {
			case key == kmsg.SASLHandshake && left == 0:
				left = rounds
				resp = kmsg.NewPtrSASLHandshakeResponse()
			case key == kmsg.SASLAuthenticate && left > 0:
				left--
				a := kmsg.NewPtrSASLAuthenticateResponse()
				if left == 0 {
					a.SessionLifetimeMillis = 15000
				}
				resp = a
			case left > 0:
				bad <- fmt.Sprintf("Unexpected Kafka request of type %s (correlation id %d) during SASL authentication", kmsg.NameForKey(h.Key), h.Corr)
				return
			case key == kmsg.Produce:
				p := kmsg.NewPtrProduceResponse()
				p.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}
				resp = p
			default:
				out := b.controlPlaneAnswer(h)
				if out == nil {
					bad <- fmt.Sprintf("unexpected %s (correlation id %d)", kmsg.NameForKey(h.Key), h.Corr)
					return
				}
				if _, err := c.Write(out); err != nil {
					return
				}
				continue
			}
			resp.SetVersion(h.Version)
			if _, err := c.Write(kafkaframe.AppendResponse(nil, h.Corr, resp)); err != nil {
				return
			}
		}
	}
}

// TestAskWaitsForSASLExchange: an ask (an authorization probe sent in the
// background, another instance's serve call) that comes while the
// client's SASL re-authentication (KIP-368) runs upstream goes upstream
// once the exchange ended, not between the SaslHandshake and the last
// SaslAuthenticate, where the broker fails the re-authentication and
// closes the connection; every request of the client is answered, in
// order. The exchange ends with the last round's answer for a mechanism
// whose rounds streamshift knows (SCRAM: 2), with OAUTHBEARER's empty
// answer, else with the client's next request.
func TestAskWaitsForSASLExchange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mechanism string
		rounds    int
		known     bool // the ask goes at the last round's answer
	}{{"SCRAM-SHA-512", 2, true}, {"OAUTHBEARER", 1, true}, {"GSSAPI", 3, false}} {
		t.Run(tc.mechanism, func(t *testing.T) {
			t.Parallel()
			bad := make(chan string, 4)
			up := startFakeBroker(t, serveSASL(tc.rounds, bad))
			p := startProxy(t, []string{up.addr()}, nil)
			c := dialRaw(t, p.NodeAddr(0))
			frames := make(chan []byte, 16)
			go func() {
				defer close(frames)
				for {
					var size [4]byte
					if _, err := io.ReadFull(c, size[:]); err != nil {
						return
					}
					f := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
					copy(f, size[:])
					if _, err := io.ReadFull(c, f[4:]); err != nil {
						return
					}
					frames <- f
				}
			}()
			expect := func(corr int32) {
				t.Helper()
				select {
				case f, ok := <-frames:
					if !ok {
						select {
						case msg := <-bad:
							t.Fatalf("broker: %s", msg)
						default:
						}
						t.Fatalf("connection closed waiting for the answer to %d", corr)
					}
					if got := frameCorr(f); got != corr {
						t.Fatalf("answer with correlation id %d, want %d", got, corr)
					}
				case msg := <-bad:
					t.Fatalf("broker: %s", msg)
				case <-time.After(10 * time.Second):
					t.Fatalf("no answer to %d", corr)
				}
			}
			// Kafka's clients number SASL requests from a reserved range.
			sasl := int32(1<<31 - 8)
			// exchange authenticates with the answers to the requests
			// inFlight still to come, and runs then once the broker is
			// in the exchange.
			exchange := func(inFlight []int32, then func()) {
				t.Helper()
				hs := kmsg.NewPtrSASLHandshakeRequest()
				hs.Version, hs.Mechanism = 1, tc.mechanism
				c.send(sasl, hs)
				for _, corr := range inFlight {
					expect(corr)
				}
				expect(sasl)
				sasl++
				then()
				for range tc.rounds {
					a := kmsg.NewPtrSASLAuthenticateRequest()
					a.Version, a.SASLAuthBytes = 2, []byte("n,,n=alice,r=nonce")
					c.send(sasl, a)
					expect(sasl)
					sasl++
				}
			}
			produce := func(corr int32) {
				pr := kmsg.NewPtrProduceRequest()
				pr.Version, pr.Acks, pr.TimeoutMillis = 9, -1, 1000
				c.send(corr, pr)
			}
			exchange(nil, func() {})
			produce(1)
			expect(1)
			var cc *clientConn
			p.mu.Lock()
			for x := range p.conns {
				cc = x
			}
			p.mu.Unlock()
			// A re-authentication with a Produce in flight (the Java
			// client starts one with its requests outstanding), and an
			// ask coming once the broker is in the exchange.
			produce(2)
			var answer <-chan AskAnswer
			exchange([]int32{2}, func() {
				md := kmsg.NewPtrMetadataRequest()
				md.Version = 9
				answer = cc.Ask(md)
				time.Sleep(50 * time.Millisecond) // the ask reaches the loop
			})
			answered := func() {
				t.Helper()
				select {
				case a := <-answer:
					if a.Err != nil {
						t.Errorf("ask: %v", a.Err)
					}
				case msg := <-bad:
					t.Fatalf("broker: %s", msg)
				case <-time.After(10 * time.Second):
					t.Fatal("ask not answered")
				}
			}
			if tc.known {
				answered()
			}
			produce(3)
			expect(3)
			if !tc.known {
				answered()
			}
			select {
			case msg := <-bad:
				t.Fatalf("broker: %s", msg)
			default:
			}
		})
	}
}
