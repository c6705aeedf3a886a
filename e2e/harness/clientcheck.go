package harness

import (
	"context"
	"fmt"
	"path/filepath"
)

// ClientCheckOptions configure RunClientCheck (e2e.ClientCheck: plain kafka-clients, no Streams).
type ClientCheckOptions struct {
	Build         string // App44 (default), App39, App36 or App28: which kafka-clients
	Dir           string // run dir (app.out, app.log); must not exist or be empty
	Bootstrap     string // the broker, or a proxy in front of it
	Topic         string // default e2e-check
	Partitions    int    // default 3
	Records       int    // default 1000
	Transactional bool   // produce in a transaction (and consume read_committed, as always)
	GroupID       string // default e2e-check
	GroupProtocol string // "classic" (default) or "consumer" (KIP-848)
}

// ClientCheckResult is what ClientCheck printed.
type ClientCheckResult struct {
	Produced, Consumed, Duplicates int64
}

// RunClientCheck creates a topic, produces Records records (idempotent, optionally in a
// transaction), consumes them back in a consumer group with commits, and fails unless every
// record came back exactly once.
func RunClientCheck(ctx context.Context, o ClientCheckOptions) (ClientCheckResult, error) {
	var res ClientCheckResult
	extra := appArgs{fmt.Sprintf("transactional=%t", o.Transactional)}
	extra.add("topic", o.Topic)
	extra.add("group.id", o.GroupID)
	extra.add("group.protocol", o.GroupProtocol)
	extra.addCount("partitions", o.Partitions)
	extra.addCount("records", o.Records)
	a, err := StartApp(AppOptions{Name: "clientcheck", Build: o.Build, Dir: o.Dir, Bootstrap: o.Bootstrap,
		Main: "e2e.ClientCheck", Extra: extra})
	if err != nil {
		return res, err
	}
	werr := a.Wait(ctx)
	if werr == context.Canceled || werr == context.DeadlineExceeded {
		_ = a.Stop()
	}
	for _, ev := range a.Events() {
		switch ev.Kind {
		case "produced":
			res.Produced = ev.Count
		case "consumed":
			res.Consumed = ev.Count
			res.Duplicates = ev.Duplicates
		}
	}
	if werr != nil {
		return res, fmt.Errorf("client check %+v: %v (see %s)", res, werr, filepath.Join(o.Dir, "app.log"))
	}
	return res, nil
}
