package coordinator

import (
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// PartitionState is where a group-log partition stands on this instance.
type PartitionState int8

const (
	// PartitionNotOwned: another instance serves the partition's groups
	// (or nobody, while it moves): NOT_COORDINATOR.
	PartitionNotOwned PartitionState = iota
	// PartitionLoading: this instance gained the partition and replays it;
	// its groups get COORDINATOR_LOAD_IN_PROGRESS until it is loaded.
	PartitionLoading
	// PartitionLoaded: this instance serves the partition's groups.
	PartitionLoaded
)

func (s PartitionState) String() string {
	switch s {
	case PartitionLoading:
		return "loading"
	case PartitionLoaded:
		return "loaded"
	}
	return "not-owned"
}

// Partitions is which partitions of the group log this coordinator serves,
// as Kafka's runtime loads and unloads __consumer_offsets partitions: a
// group is served only while its partition (PartitionFor) is loaded here.
// The instance group (package upstream) says which partitions are this
// instance's; the durable log fences what a former owner still writes.
type Partitions struct {
	c *Coordinator
	n int32

	mu    sync.Mutex
	state map[int32]PartitionState
	// epoch bumps on every BeginLoad and Unload of a partition, so a load
	// that finishes after its partition was taken away does not serve it.
	epoch map[int32]uint64
	// loadTook is the last load's duration per partition.
	loadTook map[int32]time.Duration
}

// NewPartitions returns the table of a log of n partitions, none served.
func NewPartitions(c *Coordinator, n int32) *Partitions {
	if n < 1 {
		n = 1
	}
	return &Partitions{c: c, n: n, state: map[int32]PartitionState{}, epoch: map[int32]uint64{}, loadTook: map[int32]time.Duration{}}
}

// Count is the log's partition count.
func (ps *Partitions) Count() int32 { return ps.n }

// Of is the partition of a group.
func (ps *Partitions) Of(group string) int32 { return PartitionFor(group, ps.n) }

// State is a partition's state here.
func (ps *Partitions) State(p int32) PartitionState {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.state[p]
}

// Serving says whether this instance serves the group now: nil, or an
// error carrying NOT_COORDINATOR (another instance owns its partition) or
// COORDINATOR_LOAD_IN_PROGRESS (this one is loading it), which Kafka
// clients retry after finding the coordinator again.
func (ps *Partitions) Serving(group string) error {
	p := ps.Of(group)
	switch ps.State(p) {
	case PartitionLoaded:
		return nil
	case PartitionLoading:
		return fmt.Errorf("group %s: log partition %d is loading on this streamshift instance: %w", group, p, kerr.CoordinatorLoadInProgress)
	}
	return fmt.Errorf("group %s: log partition %d is not served by this streamshift instance: %w", group, p, kerr.NotCoordinator)
}

// BeginLoad marks the partition loading (its groups get
// COORDINATOR_LOAD_IN_PROGRESS) and returns the load's token.
func (ps *Partitions) BeginLoad(p int32) uint64 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.epoch[p]++
	ps.state[p] = PartitionLoading
	return ps.epoch[p]
}

// FinishLoad replays the partition's records (read to the end of the
// partition, read_committed) and serves its groups, with fresh session
// timers as Kafka's load arms them. It reports false, and drops what it
// loaded, if the partition was unloaded or loaded again meanwhile.
func (ps *Partitions) FinishLoad(p int32, token uint64, records []streams.Record, took time.Duration) (bool, error) {
	if err := ps.c.Load(records); err != nil {
		ps.Unload(p)
		return false, fmt.Errorf("load log partition %d: %w", p, err)
	}
	ps.mu.Lock()
	current := ps.epoch[p] == token
	if current {
		ps.state[p] = PartitionLoaded
		ps.loadTook[p] = took
	}
	ps.mu.Unlock()
	if !current {
		ps.unloadGroups(p)
		return false, nil
	}
	ps.c.logger.Info().Int32("partition", p).Int("records", len(records)).Dur("took", took).
		Msgf("Finished loading of group log partition %d in %dms; its groups are served here.", p, took.Milliseconds())
	return true, nil
}

// Unload stops serving the partition at once (its groups get
// NOT_COORDINATOR from now on) and drops every group of it from memory:
// their requests still queued are answered NOT_COORDINATOR, their timers
// stop. Their records stay in the log for the next owner.
func (ps *Partitions) Unload(p int32) {
	ps.mu.Lock()
	ps.epoch[p]++
	was := ps.state[p]
	delete(ps.state, p)
	ps.mu.Unlock()
	n := ps.unloadGroups(p)
	if was != PartitionNotOwned {
		ps.c.logger.Info().Int32("partition", p).Int("groups", n).Str("was", was.String()).
			Msgf("Unloaded group log partition %d (%d groups); another instance serves them.", p, n)
	}
}

// unloadGroups unloads every group of partition p the coordinator holds or
// has a claim for.
func (ps *Partitions) unloadGroups(p int32) int {
	c := ps.c
	c.mu.Lock()
	var ids []string
	for id := range c.queues {
		if PartitionFor(id, ps.n) == p {
			ids = append(ids, id)
		}
	}
	for id := range c.claims {
		if PartitionFor(id, ps.n) == p {
			delete(c.claims, id)
		}
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.Unload(id)
	}
	return len(ids)
}

// PartitionStatus is one partition as /cluster shows it.
type PartitionStatus struct {
	Partition int32         `json:"partition"`
	State     string        `json:"state"`
	LoadTook  time.Duration `json:"load_took_ns,omitempty"`
}

// Status lists the partitions this instance loads or serves.
func (ps *Partitions) Status() []PartitionStatus {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]PartitionStatus, 0, len(ps.state))
	for p, s := range ps.state {
		out = append(out, PartitionStatus{Partition: p, State: s.String(), LoadTook: ps.loadTook[p]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// PartitionFor is the partition of the group log (of n partitions) that
// holds group id: Kafka's own rule for __consumer_offsets,
// Utils.abs(groupId.hashCode()) % n, with Java's String.hashCode over the
// id's UTF-16 code units and Utils.abs mapping Integer.MIN_VALUE to 0. The
// rule is Kafka's so it is documented outside streamshift and stable across
// releases: every instance, of every version, places a group on the same
// partition. n < 1 counts as 1.
func PartitionFor(groupID string, n int32) int32 {
	if n <= 1 {
		return 0
	}
	h := javaStringHash(groupID)
	if h == -1<<31 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return h % n
}

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over UTF-16 code units, in int32 arithmetic (wrapping). Bytes that are
// not UTF-8 count as U+FFFD each (Java's decoder may fold a malformed
// sequence into fewer; Kafka clients send UTF-8).
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}
