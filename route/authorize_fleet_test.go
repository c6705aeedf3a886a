package route

import (
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestAuthorizationFleetProbes measures the authorization probes a fleet
// of steady streams members costs the broker: STREAMSHIFT_AUTHZ_MEMBERS
// members (default 200), each on its own connection as a Kafka Streams
// client is, in STREAMSHIFT_AUTHZ_GROUPS groups (default 20), all of one
// SASL PLAIN principal, heartbeating through a proxy in front of kfake,
// with the answers cached per connection (before issue #43) and per
// principal. Time is scaled down tenfold: a 500 ms heartbeat interval and a
// 1 s authorization.cache-ttl, the ratio of Kafka's 5 s and the default
// 10 s (STREAMSHIFT_AUTHZ_TTL_MS changes the TTL). Opt-in (STREAMSHIFT_BENCH=1); it logs probes per heartbeat and
// asserts nothing about them.
func TestAuthorizationFleetProbes(t *testing.T) {
	if os.Getenv("STREAMSHIFT_BENCH") == "" {
		t.Skip("a measurement: STREAMSHIFT_BENCH=1 runs it")
	}
	members, groups := envInt("STREAMSHIFT_AUTHZ_MEMBERS", 200), envInt("STREAMSHIFT_AUTHZ_GROUPS", 20)
	const interval, warm, measure = 500 * time.Millisecond, 3 * time.Second, 10 * time.Second
	ttl := time.Duration(envInt("STREAMSHIFT_AUTHZ_TTL_MS", 1000)) * time.Millisecond
	for _, perConn := range []bool{true, false} {
		name := map[bool]string{true: "per-connection", false: "per-principal"}[perConn]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, withACLsAnd(
				allow(kmsg.ACLResourceTypeTopic, "fleet-", kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationDescribe),
				allow(kmsg.ACLResourceTypeTopic, "fleet-", kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationCreate),
			), func(e *env) { e.authCache, e.authPerConnection, e.timeout = ttl, perConn, 5*time.Minute })
			brokers := make([]*kgo.Broker, members)
			for i := range members {
				cl, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ClientID("streams-app"),
					kgo.SASL(plain.Auth{User: "alice", Pass: "alice"}.AsMechanism()))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(cl.Close)
				brokers[i] = e.coordinatorOf("fleet-"+strconv.Itoa(i%groups), cl)
			}
			var heartbeats, failed atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for i, b := range brokers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					group, member := "fleet-"+strconv.Itoa(i%groups), "m-"+strconv.Itoa(i)
					resp, err := aclJoin(group, member, "in").RequestWith(e.ctx, b)
					if err != nil || resp.ErrorCode != 0 {
						failed.Add(1)
						return
					}
					epoch := resp.MemberEpoch
					time.Sleep(rand.N(interval)) // members spread over the interval
					tick := time.NewTicker(interval)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
						}
						hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
						hb.Group, hb.MemberID, hb.MemberEpoch = group, member, epoch
						r, err := hb.RequestWith(e.ctx, b)
						if err != nil || r.ErrorCode != 0 {
							failed.Add(1)
							continue
						}
						epoch = r.MemberEpoch
						heartbeats.Add(1)
					}
				}()
			}
			time.Sleep(warm)
			p0, h0 := e.routes.AuthorizationProbes(), heartbeats.Load()
			time.Sleep(measure)
			p1, h1 := e.routes.AuthorizationProbes(), heartbeats.Load()
			close(stop)
			wg.Wait()
			probes := (p1.Allowed + p1.Denied + p1.Failed) - (p0.Allowed + p0.Denied + p0.Failed)
			hbs := h1 - h0
			t.Logf("%s, TTL %v (scaled tenfold): %d members of %d groups, one principal: %d heartbeats, %d probes upstream (%d denied, %d failed) in %v: %.3f probes per heartbeat; %d heartbeats failed",
				name, ttl, members, groups, hbs, probes, p1.Denied-p0.Denied, p1.Failed-p0.Failed, measure, float64(probes)/float64(max(hbs, 1)), failed.Load())
		})
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
