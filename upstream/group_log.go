package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/coordinator"
)

// GroupLog is the coordinator's durable Log: a compacted single-partition
// topic of the upstream cluster. Each Append is one producer transaction, so
// a change is in the log entirely or not at all, and the log is read back
// with read_committed. What is committed is mirrored in memory for Load.
//
// One GroupLog must own the topic (its transactional id fences any older
// writer); several streamshift instances need one topic each, or the
// ownership work of a later issue.
type GroupLog struct {
	topic   string
	timeout time.Duration
	prod    *kgo.Client

	mu     sync.Mutex // one transaction at a time
	mirror *coordinator.MemoryLog
}

// GroupLogOptions configure OpenGroupLog.
type GroupLogOptions struct {
	Seeds []string
	Topic string // default "__streamshift_groups"
	// TransactionalID fences older writers; default "streamshift-<topic>".
	TransactionalID string
	// Timeout bounds one append (default 10s).
	Timeout time.Duration
	// Opts are added to both clients (TLS, SASL, ...).
	Opts []kgo.Opt
	// Log gets a warning for each record the load skips (the zero Logger
	// discards).
	Log zerolog.Logger
}

// OpenGroupLog creates the topic if needed (compacted, one partition), reads
// back every committed record, and returns the log with those records, which
// the caller hands to Coordinator.Load.
func OpenGroupLog(ctx context.Context, o GroupLogOptions) (*GroupLog, []coordinator.Record, error) {
	o.Topic = cmp.Or(o.Topic, "__streamshift_groups")
	o.TransactionalID = cmp.Or(o.TransactionalID, "streamshift-"+o.Topic)
	o.Timeout = cmp.Or(o.Timeout, 10*time.Second)
	admCl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(o.Seeds...)}, o.Opts...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("group log %s: %w", o.Topic, err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, o.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return nil, nil, fmt.Errorf("create group log topic %s: %w", o.Topic, err)
	}

	// The producer first: initializing its transactional id aborts what an
	// older writer left open, so the read below sees only committed changes.
	prod, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(o.Seeds...),
		kgo.TransactionalID(o.TransactionalID),
		kgo.DefaultProduceTopic(o.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(o.Timeout * 3),
	}, o.Opts...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("group log producer: %w", err)
	}
	l := &GroupLog{topic: o.Topic, timeout: o.Timeout, prod: prod, mirror: coordinator.NewMemoryLog()}
	// A committed sentinel record marks where the read-back may stop
	// (transaction markers take the last offsets, so the end offset alone
	// does not say when the last record was seen); its transaction also
	// fences older producers of the same transactional id.
	sentinel, err := l.writeSentinel(ctx, o.TransactionalID)
	if err != nil {
		prod.Close()
		return nil, nil, fmt.Errorf("group log %s: open: %w", o.Topic, err)
	}
	recs, err := readGroupLog(ctx, o, sentinel)
	if err != nil {
		prod.Close()
		return nil, nil, err
	}
	for _, r := range recs {
		if err := l.mirror.Append(r.GroupID, []coordinator.Record{r}); err != nil {
			prod.Close()
			return nil, nil, err
		}
	}
	return l, recs, nil
}

// sentinelKey is the key of the record OpenGroupLog commits to find the end
// of the log; the coordinator's record keys have no "open".
type sentinelKey struct {
	V    int    `json:"v"`
	Open string `json:"open"`
}

// sentinelKeyVersion is the version of the coordinator's record keys when
// the sentinel was introduced; readers look only at "open".
const sentinelKeyVersion = 1

func (l *GroupLog) writeSentinel(ctx context.Context, txid string) (int64, error) {
	key, err := json.Marshal(sentinelKey{V: sentinelKeyVersion, Open: txid})
	if err != nil {
		return 0, err
	}
	if err := l.prod.BeginTransaction(); err != nil {
		return 0, err
	}
	r, perr := l.prod.ProduceSync(ctx, &kgo.Record{Key: key, Value: []byte("{}"), Partition: 0}).First()
	commit := kgo.TryCommit
	if perr != nil {
		commit = kgo.TryAbort
	}
	if err := l.prod.EndTransaction(ctx, commit); err != nil || perr != nil {
		return 0, errors.Join(perr, err)
	}
	return r.Offset, nil
}

// readGroupLog consumes the topic from the start up to the sentinel.
func readGroupLog(ctx context.Context, o GroupLogOptions, sentinel int64) ([]coordinator.Record, error) {
	cons, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(o.Seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.Topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	}, o.Opts...)...)
	if err != nil {
		return nil, fmt.Errorf("group log consumer: %w", err)
	}
	defer cons.Close()
	var recs []coordinator.Record
	for {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("group log %s: read: %w", o.Topic, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("group log %s: read: %w", o.Topic, ferr)
		}
		done := false
		fs.EachRecord(func(kr *kgo.Record) {
			if done || ferr != nil {
				return
			}
			if kr.Offset >= sentinel {
				done = true
				return
			}
			var sk sentinelKey
			if json.Unmarshal(kr.Key, &sk) == nil && sk.Open != "" {
				return // an older writer's sentinel
			}
			r, err := coordinator.UnmarshalRecord(kr.Key, kr.Value)
			if errors.Is(err, coordinator.ErrUnknownRecordType) {
				// A newer streamshift wrote it: this release loads the rest
				// (a rollback), and compaction keeps the record for the
				// release that knows it.
				o.Log.Warn().Str("topic", o.Topic).Int64("offset", kr.Offset).
					Int16("type", int16(r.Type)).Str("group", r.GroupID).Str("member", r.MemberID).
					Msg("group log: skipping a record of an unknown type (written by a newer streamshift)")
				return
			}
			if err != nil {
				ferr = fmt.Errorf("group log %s offset %d: %w", o.Topic, kr.Offset, err)
				return
			}
			recs = append(recs, r)
		})
		if ferr != nil {
			return nil, ferr
		}
		if done {
			return recs, nil
		}
	}
}

// Append writes the records in one transaction.
func (l *GroupLog) Append(groupID string, recs []coordinator.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	if err := l.transact(ctx, recs); err != nil {
		return fmt.Errorf("group log %s: %w", l.topic, err)
	}
	return l.mirror.Append(groupID, recs)
}

func (l *GroupLog) transact(ctx context.Context, recs []coordinator.Record) error {
	if err := l.prod.BeginTransaction(); err != nil {
		return err
	}
	krs := make([]*kgo.Record, 0, len(recs))
	for _, r := range recs {
		k, v, err := coordinator.MarshalRecord(r)
		if err != nil {
			_ = l.prod.EndTransaction(ctx, kgo.TryAbort)
			return err
		}
		krs = append(krs, &kgo.Record{Key: k, Value: v, Partition: 0})
	}
	var perr error
	if len(krs) > 0 {
		perr = l.prod.ProduceSync(ctx, krs...).FirstErr()
	}
	commit := kgo.TryCommit
	if perr != nil {
		commit = kgo.TryAbort
	}
	if err := l.prod.EndTransaction(ctx, commit); err != nil {
		return errors.Join(perr, err)
	}
	return perr
}

// Load returns a group's committed records from the mirror.
func (l *GroupLog) Load(groupID string) ([]coordinator.Record, error) { return l.mirror.Load(groupID) }

// Close closes the producer.
func (l *GroupLog) Close() { l.prod.Close() }
