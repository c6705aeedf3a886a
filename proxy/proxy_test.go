package proxy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestProduceConsume(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.SeedTopics(8, "t"))
	p := startProxy(t, c.ListenAddrs(), nil)
	var w addrWatch
	cl := newClient(t, p, &w, kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 500
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: "t", Value: []byte(fmt.Sprint(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	w.assertOnlyProxy(t, p, c.ListenAddrs())
}
