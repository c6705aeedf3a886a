package proxy

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// proxiedCluster starts a kfake cluster with opts behind a proxy (tweak may
// be nil) and returns them with an address watch for the test's clients and a
// context that ends after timeout or with the test.
func proxiedCluster(t *testing.T, timeout time.Duration, tweak func(*Options), opts ...kfake.Opt) (*kfake.Cluster, *testProxy, *addrWatch, context.Context) {
	t.Helper()
	c := newCluster(t, opts...)
	p := startProxy(t, c.ListenAddrs(), tweak)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return c, p, new(addrWatch), ctx
}

// committedSum is the sum of group's committed offsets, read through cl.
func committedSum(t *testing.T, ctx context.Context, cl *kgo.Client, group string) int64 {
	t.Helper()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o kadm.OffsetResponse) { total += o.At })
	return total
}

// produceN produces n records to topic and waits for them.
func produceN(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, from, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := from; i < from+n; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	wg.Wait()
}

// consumeN polls until n distinct values were seen.
func consumeN(t *testing.T, ctx context.Context, cl *kgo.Client, n int) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d: %v", len(seen), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	return seen
}

func TestConsumerGroups(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"classic-cooperative", []kgo.Opt{kgo.Balancers(kgo.CooperativeStickyBalancer())}},
		{"classic-range", []kgo.Opt{kgo.Balancers(kgo.RangeBalancer())}},
		{"kip848", []kgo.Opt{kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p, w, ctx := proxiedCluster(t, 60*time.Second, nil, kfake.SeedTopics(6, "g"))
			prod := newClient(t, p, w)
			produceN(t, ctx, prod, "g", 0, 300)

			group := "grp-" + tc.name
			opts := append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics("g"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit()}, tc.opts...)
			a := newClient(t, p, w, opts...)
			b := newClient(t, p, w, opts...)
			var mu sync.Mutex
			seen := map[string]bool{}
			var wg sync.WaitGroup
			for _, cl := range []*kgo.Client{a, b} {
				wg.Add(1)
				go func(cl *kgo.Client) {
					defer wg.Done()
					for ctx.Err() == nil {
						mu.Lock()
						n := len(seen)
						mu.Unlock()
						if n >= 300 {
							return
						}
						pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
						fs := cl.PollFetches(pctx)
						pcancel()
						mu.Lock()
						fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
						mu.Unlock()
						if err := cl.CommitUncommittedOffsets(ctx); err != nil {
							t.Errorf("commit: %v", err)
							return
						}
					}
				}(cl)
			}
			wg.Wait()
			if len(seen) < 300 {
				t.Fatalf("group consumed %d of 300", len(seen))
			}
			// The committed offsets reached the upstream.
			if total := committedSum(t, ctx, prod, group); total != 300 {
				t.Errorf("committed offsets sum to %d, want 300", total)
			}
			w.assertOnlyProxy(t, p, c.ListenAddrs())
		})
	}
}

func TestTransactions(t *testing.T) {
	t.Parallel()
	c, p, w, ctx := proxiedCluster(t, 60*time.Second, nil, kfake.SeedTopics(3, "in", "out"))
	cl := newClient(t, p, w, kgo.TransactionalID("txn-1"))
	for i, commit := range []bool{true, false, true} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produceN(t, ctx, cl, "out", i*10, 10)
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end txn %d: %v", i, err)
		}
	}
	rc := newClient(t, p, w, kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := consumeN(t, ctx, rc, 20)
	for i := 10; i < 20; i++ {
		if seen[strconv.Itoa(i)] {
			t.Errorf("aborted record %d visible", i)
		}
	}

	// A consume-transform-produce session commits offsets in the transaction.
	produceN(t, ctx, newClient(t, p, w), "in", 0, 30)
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(p.addr), kgo.WithHooks(w), kgo.TransactionalID("txn-2"),
		kgo.ConsumerGroup("eos"), kgo.ConsumeTopics("in"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	got := 0
	for got < 30 {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			sess.Produce(ctx, &kgo.Record{Topic: "out", Value: r.Value}, nil)
		})
		if _, err := sess.End(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	if total := committedSum(t, ctx, cl, "eos"); total != 30 {
		t.Errorf("transactional offsets sum to %d, want 30", total)
	}
	w.assertOnlyProxy(t, p, c.ListenAddrs())
}

func TestAdminAddresses(t *testing.T) {
	t.Parallel()
	c, p, w, ctx := proxiedCluster(t, 30*time.Second, nil, kfake.SeedTopics(4, "a"))
	adm := kadm.NewClient(newClient(t, p, w))
	proxyAddrs := map[string]bool{}
	for id := p.opts.NodeIDMin; id <= p.opts.NodeIDMax; id++ {
		proxyAddrs[p.NodeAddr(id)] = true
	}
	check := func(what, host string, port int32) {
		t.Helper()
		if a := net.JoinHostPort(host, strconv.Itoa(int(port))); !proxyAddrs[a] {
			t.Errorf("%s: %s is not a proxy address", what, a)
		}
	}
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 3 {
		t.Fatalf("metadata has %d brokers", len(md.Brokers))
	}
	for _, b := range md.Brokers {
		check("metadata", b.Host, b.Port)
		if b.Port != int32(p.opts.NodePortBase)+b.NodeID {
			t.Errorf("node %d on port %d", b.NodeID, b.Port)
		}
	}
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, newClient(t, p, w))
	if err != nil {
		t.Fatal(err)
	}
	if len(dc.Brokers) != 3 {
		t.Fatalf("describe cluster has %d brokers", len(dc.Brokers))
	}
	for _, b := range dc.Brokers {
		check("describe cluster", b.Host, b.Port)
	}
	// FindCoordinator, batched (v4+) and single (v3 via an old-version client).
	for _, maxv := range []*kversion.Versions{nil, kversion.V2_8_0()} {
		opts := []kgo.Opt{}
		if maxv != nil {
			opts = append(opts, kgo.MaxVersions(maxv))
		}
		a := kadm.NewClient(newClient(t, p, w, opts...))
		gcs := a.FindGroupCoordinators(ctx, "g1", "g2", "g3")
		for _, g := range gcs {
			if g.Err != nil {
				t.Fatalf("find coordinator: %v", g.Err)
			}
			check("find coordinator", g.Host, g.Port)
		}
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "created"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DescribeTopicConfigs(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.ListGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.ApiVersions(ctx); err != nil {
		t.Fatal(err)
	}
	w.assertOnlyProxy(t, p, c.ListenAddrs())
}

func TestLeaderMoves(t *testing.T) {
	t.Parallel()
	c, p, w, ctx := proxiedCluster(t, 60*time.Second, nil, kfake.SeedTopics(8, "m"))
	prod := newClient(t, p, w)
	cons := newClient(t, p, w, kgo.ConsumeTopics("m"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	total := 0
	for round := 0; round < 5; round++ {
		produceN(t, ctx, prod, "m", total, 100)
		total += 100
		c.ShufflePartitionLeaders()
		for part := int32(0); part < 8; part++ {
			if err := c.MoveTopicPartition("m", part, (part+int32(round))%3); err != nil {
				t.Fatal(err)
			}
		}
	}
	produceN(t, ctx, prod, "m", total, 100)
	total += 100
	seen := consumeN(t, ctx, cons, total)
	if len(seen) != total {
		t.Fatalf("consumed %d of %d", len(seen), total)
	}
	w.assertOnlyProxy(t, p, c.ListenAddrs())
}

// TestOldBroker runs the client suite against a broker limited to an old
// release's versions: the proxy's caps and rewrites work on whatever the
// upstream negotiates.
func TestOldBroker(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		name string
		v    *kversion.Versions
	}{{"2.8", kversion.V2_8_0()}, {"3.9", kversion.V3_9_0()}} {
		t.Run(v.name, func(t *testing.T) {
			c, p, w, ctx := proxiedCluster(t, 30*time.Second, nil, kfake.SeedTopics(4, "o"), kfake.MaxVersions(v.v))
			prod := newClient(t, p, w)
			produceN(t, ctx, prod, "o", 0, 200)
			cons := newClient(t, p, w, kgo.ConsumerGroup("old"), kgo.ConsumeTopics("o"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if n := len(consumeN(t, ctx, cons, 200)); n != 200 {
				t.Fatalf("consumed %d", n)
			}
			vers, err := kadm.NewClient(prod).ApiVersions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			vers.Each(func(bv kadm.BrokerApiVersions) {
				bv.EachKeySorted(func(key, _, max int16) {
					if want, ok := v.v.LookupMaxKeyVersion(key); ok && max > want {
						t.Errorf("key %d advertised v%d above the broker's v%d", key, max, want)
					}
				})
			})
			w.assertOnlyProxy(t, p, c.ListenAddrs())
		})
	}
}

func TestAcksZero(t *testing.T) {
	t.Parallel()
	_, p, w, ctx := proxiedCluster(t, 30*time.Second, nil, kfake.SeedTopics(1, "z"))
	prod := newClient(t, p, w, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	produceN(t, ctx, prod, "z", 0, 100)
	// A request with a response after acks=0 ones must still be matched.
	produceN(t, ctx, newClient(t, p, w), "z", 100, 1)
	cons := newClient(t, p, w, kgo.ConsumeTopics("z"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if n := len(consumeN(t, ctx, cons, 101)); n != 101 {
		t.Fatalf("consumed %d", n)
	}
}

// TestBackpressure runs with limits so low that every connection pauses
// constantly: one request in flight, 1 KiB of unsent bytes, while 10 KiB
// records go both ways. Everything must still arrive, in order.
func TestBackpressure(t *testing.T) {
	t.Parallel()
	_, p, w, ctx := proxiedCluster(t, 60*time.Second, func(o *Options) {
		o.MaxInflight = 1
		o.BufferHighWater = 1024
	}, kfake.SeedTopics(4, "bp"))
	prod := newClient(t, p, w, kgo.MaxBufferedRecords(1000))
	value := make([]byte, 10<<10)
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		wg.Add(1)
		v := append([]byte(strconv.Itoa(i)+":"), value...)
		prod.Produce(ctx, &kgo.Record{Topic: "bp", Value: v}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	wg.Wait()
	cons := newClient(t, p, w, kgo.ConsumeTopics("bp"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := 0
	for seen < 300 && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(*kgo.Record) { seen++ })
	}
	if seen != 300 {
		t.Fatalf("consumed %d of 300", seen)
	}
	var m dto.Metric
	if err := p.m.paused.Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.GetCounter().GetValue() == 0 {
		t.Error("no connection ever paused: the test did not exercise backpressure")
	}
}
