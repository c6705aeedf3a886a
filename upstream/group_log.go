package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/internal/lockedmap"
)

// GroupLog is the coordinator's durable Log: a compacted topic of the
// upstream cluster with a fixed number of partitions; a group's records live
// on coordinator.PartitionFor(group, partitions). An instance writes only
// the partitions it owns (Acquire), each through a transactional producer
// of its own whose id is derived from the topic and partition
// (PartitionTransactionalID): a new owner's InitProducerId fences the
// previous one, whose next append fails (ErrNotOwner), so a zombie instance
// never writes over its successor. Each Append is one producer transaction,
// so a change is in the log entirely or not at all, and a partition is read
// back with read_committed. What is committed is mirrored in memory for
// Load.
type GroupLog struct {
	o GroupLogOptions

	mu      sync.Mutex
	writers map[int32]*partitionWriter
}

// partitionWriter is the owned state of one partition: its producer and
// the mirror of its committed records.
type partitionWriter struct {
	p      int32
	mu     sync.Mutex // one transaction at a time
	prod   *kgo.Client
	mirror *coordinator.MemoryLog
	fenced bool // guarded by mu
}

// GroupLogOptions configure OpenGroupLog.
type GroupLogOptions struct {
	Seeds []string
	Topic string // default "__streamshift_groups"
	// Partitions of the topic, fixed once it exists (default 1): a
	// different count on an existing topic is an error at open.
	Partitions int32
	// TransactionalID prefixes the partitions' transactional ids; default
	// "streamshift-<topic>".
	TransactionalID string
	// Timeout bounds one append (default 10s).
	Timeout time.Duration
	// Opts are added to every client (TLS, SASL, ...).
	Opts []kgo.Opt
	// Log gets a warning for each record the load skips (the zero Logger
	// discards).
	Log zerolog.Logger
	// OnFenced, if set, is told (on a goroutine of its own) that a
	// partition's producer was fenced by a newer owner: this instance no
	// longer writes it, and must stop serving its groups.
	OnFenced func(partition int32, err error)
}

// ErrNotOwner wraps an append to a partition this instance does not own (or
// no longer: its producer was fenced); it carries NOT_COORDINATOR, which
// the client answers by finding the coordinator again.
var ErrNotOwner = fmt.Errorf("this streamshift instance does not own the group's log partition: %w", kerr.NotCoordinator)

// OpenGroupLog opens the log and acquires every partition: one instance
// alone, which writes the whole log (tests, a cluster of one). It returns
// the committed records, which the caller hands to Coordinator.Load.
func OpenGroupLog(ctx context.Context, o GroupLogOptions) (*GroupLog, []streams.Record, error) {
	l, err := OpenSharedGroupLog(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	var all []streams.Record
	for p := int32(0); p < l.o.Partitions; p++ {
		recs, err := l.Acquire(ctx, p)
		if err != nil {
			l.Close()
			return nil, nil, err
		}
		all = append(all, recs...)
	}
	return l, all, nil
}

// OpenSharedGroupLog creates the topic if needed (compacted, o.Partitions
// partitions) or checks the partition count of the existing one, and
// returns the log owning no partition: the instance group hands them out
// (Acquire, Release).
func OpenSharedGroupLog(ctx context.Context, o GroupLogOptions) (*GroupLog, error) {
	if o.Topic == "" {
		o.Topic = "__streamshift_groups"
	}
	if o.Partitions <= 0 {
		o.Partitions = 1
	}
	if o.TransactionalID == "" {
		o.TransactionalID = GroupLogTransactionalID(o.Topic)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if err := ensureLogTopic(ctx, o); err != nil {
		return nil, err
	}
	return &GroupLog{o: o, writers: map[int32]*partitionWriter{}}, nil
}

// ensureLogTopic checks the existing topic's partitions, or creates the
// topic: a group's partition depends on the count, so another count would
// place groups where no record of theirs is. It asks first, so a topic the
// operator created needs no CREATE ACL (Kafka answers CreateTopics of an
// existing topic TOPIC_ALREADY_EXISTS only to a principal that may CREATE
// it); two instances starting at once both create, and the second checks.
func ensureLogTopic(ctx context.Context, o GroupLogOptions) error {
	admCl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(o.Seeds...)}, o.Opts...)...)
	if err != nil {
		return fmt.Errorf("group log %s: %w", o.Topic, err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	if exists, _, err := checkLogTopic(ctx, adm, o); exists || err != nil {
		return err
	}
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, o.Partitions, -1, map[string]*string{"cleanup.policy": &compact}, o.Topic)
	if err == nil {
		err = resp.Err
	}
	if err == nil {
		return nil
	}
	if !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create group log topic %s: %w", o.Topic, err)
	}
	exists, topicErr, err := checkLogTopic(ctx, adm, o)
	if err != nil || exists {
		return err
	}
	return fmt.Errorf("group log topic %s exists (TOPIC_ALREADY_EXISTS) but does not describe: %w", o.Topic, topicErr)
}

// checkLogTopic describes the topic: exists false when the broker does not
// know it, or does not say (topicErr, e.g. no DESCRIBE: a create that
// follows names the missing ACL); err when the describe failed or the
// partition count is not o.Partitions.
func checkLogTopic(ctx context.Context, adm *kadm.Client, o GroupLogOptions) (exists bool, topicErr, err error) {
	td, err := adm.ListTopics(ctx, o.Topic)
	if err != nil {
		return false, nil, fmt.Errorf("group log topic %s: describe: %w", o.Topic, err)
	}
	d, ok := td[o.Topic]
	if !ok {
		return false, errors.New("not in the broker's answer"), nil
	}
	if d.Err != nil {
		return false, d.Err, nil
	}
	if n := int32(len(d.Partitions)); n != o.Partitions {
		return true, nil, fmt.Errorf("group log topic %s has %d partitions, coordinator.log-partitions is %d: the count is fixed once the topic exists (groups are placed by it); set coordinator.log-partitions to %d",
			o.Topic, n, o.Partitions, n)
	}
	return true, nil, nil
}

// Partitions is the topic's partition count.
func (l *GroupLog) Partitions() int32 { return l.o.Partitions }

// Topic is the log's topic.
func (l *GroupLog) Topic() string { return l.o.Topic }

// PartitionTransactionalID is the transactional id of a partition's writer:
// the same on every instance, so the next owner fences the previous one.
func (l *GroupLog) PartitionTransactionalID(p int32) string {
	return l.o.TransactionalID + "-" + strconv.Itoa(int(p))
}

// Acquire makes this instance the writer of partition p: its producer's
// InitProducerId fences any previous owner and aborts what that one left
// open; then the partition is read back (read_committed) to its end, and
// its committed records are returned for Coordinator.Load. Until Acquire
// returns, appends for p fail with ErrNotOwner.
func (l *GroupLog) Acquire(ctx context.Context, p int32) ([]streams.Record, error) {
	if p < 0 || p >= l.o.Partitions {
		return nil, fmt.Errorf("group log %s: no partition %d", l.o.Topic, p)
	}
	l.Release(p)
	txid := l.PartitionTransactionalID(p)
	prod, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(l.o.Seeds...),
		kgo.TransactionalID(txid),
		kgo.DefaultProduceTopic(l.o.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(l.o.Timeout * 3),
	}, l.o.Opts...)...)
	if err != nil {
		return nil, fmt.Errorf("group log %s partition %d: producer: %w", l.o.Topic, p, err)
	}
	w := &partitionWriter{p: p, prod: prod, mirror: coordinator.NewMemoryLog()}
	// A committed sentinel record marks where the read-back may stop
	// (transaction markers take the last offsets, so the end offset alone
	// does not say when the last record was seen); its transaction also
	// fences older producers of the same transactional id.
	sentinel, err := w.writeSentinel(ctx, l.o.Topic, txid)
	if err != nil {
		prod.Close()
		return nil, fmt.Errorf("group log %s partition %d: acquire: %w", l.o.Topic, p, err)
	}
	recs, err := readGroupLog(ctx, l.o, p, sentinel)
	if err != nil {
		prod.Close()
		return nil, err
	}
	for _, r := range recs {
		if err := w.mirror.Append(r.GroupID, []streams.Record{r}); err != nil {
			prod.Close()
			return nil, err
		}
	}
	l.mu.Lock()
	l.writers[p] = w
	l.mu.Unlock()
	return recs, nil
}

// Release stops writing partition p (handed to another instance, or lost):
// its producer closes and its mirror goes. Appends for p fail afterwards.
func (l *GroupLog) Release(p int32) {
	if w := lockedmap.Pop(&l.mu, l.writers, p); w != nil {
		w.mu.Lock()
		w.prod.Close()
		w.mu.Unlock()
	}
}

// Owned lists the partitions this instance writes, in order.
func (l *GroupLog) Owned() []int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.writers))
}

func (l *GroupLog) writer(groupID string) (*partitionWriter, error) {
	p := coordinator.PartitionFor(groupID, l.o.Partitions)
	l.mu.Lock()
	w := l.writers[p]
	l.mu.Unlock()
	if w == nil {
		return nil, fmt.Errorf("group %s (log partition %d): %w", groupID, p, ErrNotOwner)
	}
	return w, nil
}

// sentinelKey is the key of the record Acquire commits to find the end of
// a partition; the coordinator's record keys have no "open".
type sentinelKey struct {
	V    int    `json:"v"`
	Open string `json:"open"`
}

// sentinelKeyVersion is the version of the coordinator's record keys when
// the sentinel was introduced; readers look only at "open".
const sentinelKeyVersion = 1

func (w *partitionWriter) writeSentinel(ctx context.Context, topic, txid string) (int64, error) {
	key, err := json.Marshal(sentinelKey{V: sentinelKeyVersion, Open: txid})
	if err != nil {
		return 0, err
	}
	if err := w.prod.BeginTransaction(); err != nil {
		return 0, err
	}
	r, perr := w.prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: key, Value: []byte("{}"), Partition: w.p}).First()
	commit := kgo.TryCommit
	if perr != nil {
		commit = kgo.TryAbort
	}
	if err := w.prod.EndTransaction(ctx, commit); err != nil || perr != nil {
		return 0, errors.Join(perr, err)
	}
	return r.Offset, nil
}

// readGroupLog consumes partition p from the start up to the sentinel.
func readGroupLog(ctx context.Context, o GroupLogOptions, p int32, sentinel int64) ([]streams.Record, error) {
	cons, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(o.Seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.Topic: {p: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	}, o.Opts...)...)
	if err != nil {
		return nil, fmt.Errorf("group log consumer: %w", err)
	}
	defer cons.Close()
	var recs []streams.Record
	for {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("group log %s partition %d: read: %w", o.Topic, p, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("group log %s partition %d: read: %w", o.Topic, p, ferr)
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
			r, err := streams.UnmarshalRecord(kr.Key, kr.Value)
			if errors.Is(err, streams.ErrUnknownRecordType) {
				// A newer streamshift wrote it: this release loads the rest
				// (a rollback), and compaction keeps the record for the
				// release that knows it.
				o.Log.Warn().Str("topic", o.Topic).Int32("partition", p).Int64("offset", kr.Offset).
					Int16("type", int16(r.Type)).Str("group", r.GroupID).Str("member", r.MemberID).
					Msg("group log: skipping a record of an unknown type (written by a newer streamshift)")
				return
			}
			if err != nil {
				ferr = fmt.Errorf("group log %s partition %d offset %d: %w", o.Topic, p, kr.Offset, err)
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

// Append writes the records in one transaction of the group's partition.
// A partition this instance does not own, or whose producer a newer owner
// fenced, fails with ErrNotOwner (NOT_COORDINATOR).
func (l *GroupLog) Append(groupID string, recs []streams.Record) error {
	w, err := l.writer(groupID)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fenced {
		return fmt.Errorf("group %s (log partition %d): %w", groupID, w.p, ErrNotOwner)
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.o.Timeout)
	defer cancel()
	if err := w.transact(ctx, l.o.Topic, recs); err != nil {
		if fencedError(err) {
			w.fenced = true
			l.fenced(w, err)
			return fmt.Errorf("group log %s partition %d: fenced by a newer owner (%v): %w", l.o.Topic, w.p, err, ErrNotOwner)
		}
		return fmt.Errorf("group log %s partition %d: %w", l.o.Topic, w.p, err)
	}
	return w.mirror.Append(groupID, recs)
}

// fencedError says whether a transaction failed because a newer producer
// of the same transactional id exists: the partition has a new owner.
func fencedError(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || errors.Is(err, kerr.InvalidProducerIDMapping)
}

// fenced drops the writer (if it is still the partition's) and tells the
// owner of the log.
func (l *GroupLog) fenced(w *partitionWriter, err error) {
	l.mu.Lock()
	if l.writers[w.p] == w {
		delete(l.writers, w.p)
	}
	l.mu.Unlock()
	// Closed off the append's goroutine: Close waits for the client's
	// in-flight work.
	go w.prod.Close()
	if f := l.o.OnFenced; f != nil {
		go f(w.p, err)
	}
}

func (w *partitionWriter) transact(ctx context.Context, topic string, recs []streams.Record) error {
	if err := w.prod.BeginTransaction(); err != nil {
		return err
	}
	krs := make([]*kgo.Record, 0, len(recs))
	for _, r := range recs {
		k, v, err := streams.MarshalRecord(r)
		if err != nil {
			_ = w.prod.EndTransaction(ctx, kgo.TryAbort)
			return err
		}
		krs = append(krs, &kgo.Record{Topic: topic, Key: k, Value: v, Partition: w.p})
	}
	var perr error
	if len(krs) > 0 {
		perr = w.prod.ProduceSync(ctx, krs...).FirstErr()
	}
	commit := kgo.TryCommit
	if perr != nil {
		commit = kgo.TryAbort
	}
	if err := w.prod.EndTransaction(ctx, commit); err != nil {
		return errors.Join(perr, err)
	}
	return perr
}

// Load returns a group's committed records from the mirror of its
// partition (none if this instance does not own it).
func (l *GroupLog) Load(groupID string) ([]streams.Record, error) {
	w, err := l.writer(groupID)
	if err != nil {
		return nil, err
	}
	return w.mirror.Load(groupID)
}

// Close closes every partition's producer.
func (l *GroupLog) Close() {
	for _, p := range l.Owned() {
		l.Release(p)
	}
}
