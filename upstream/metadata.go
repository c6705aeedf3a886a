package upstream

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// Metadata is the coordinator's MetadataSource on the upstream cluster: it
// lists all topics every interval, and soon after RequestRefresh. Like a
// broker's metadata image, it knows every topic, so a group's first
// heartbeat sees its source topics.
type Metadata struct {
	adm      *kadm.Client
	interval time.Duration
	minGap   time.Duration

	mu sync.Mutex
	// topics are those of img, at version.
	topics  map[string]streams.TopicMetadata
	version uint64
	img     streams.MetadataImage
	err     error
	// seq counts refreshTopics merges; added[name] is the merge that last
	// added the topic, so a listing that started before it (and may not
	// show the topic yet) does not drop it again.
	seq   uint64
	added map[string]uint64

	kick chan struct{}
}

// NewMetadata returns a source fetching through adm every interval
// (default 10s). Run must be running for it to fetch.
func NewMetadata(adm *kadm.Client, interval time.Duration) *Metadata {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	topics := map[string]streams.TopicMetadata{}
	return &Metadata{
		adm:      adm,
		interval: interval,
		minGap:   250 * time.Millisecond,
		topics:   topics,
		version:  1,
		img:      coordinator.NewMetadataImage(1, topics),
		kick:     make(chan struct{}, 1),
		added:    map[string]uint64{},
	}
}

func (u *Metadata) Image() streams.MetadataImage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.img
}

// RequestRefresh asks for a fetch soon; requests coalesce.
func (u *Metadata) RequestRefresh([]string) {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// Refresh fetches now and waits for the result.
func (u *Metadata) Refresh(ctx context.Context) error {
	return u.fetch(ctx)
}

// Run fetches until ctx ends.
func (u *Metadata) Run(ctx context.Context) {
	t := time.NewTicker(u.interval)
	defer t.Stop()
	for {
		fctx, cancel := context.WithTimeout(ctx, u.interval)
		_ = u.fetch(fctx) // kept in u.err; the last image stays in use
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-u.kick:
			select {
			case <-ctx.Done():
				return
			case <-time.After(u.minGap):
			}
		}
	}
}

func (u *Metadata) fetch(ctx context.Context) error {
	u.mu.Lock()
	seq := u.seq
	u.mu.Unlock()
	details, err := u.adm.ListTopics(ctx)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		u.err = fmt.Errorf("list upstream topics: %w", err)
		return u.err
	}
	u.err = nil
	topics := make(map[string]streams.TopicMetadata, len(details))
	for name, d := range details {
		if d.Err != nil {
			continue
		}
		topics[name] = streams.TopicMetadata{Name: name, ID: d.ID, Partitions: int32(len(d.Partitions))}
	}
	for name, s := range u.added {
		if s <= seq {
			delete(u.added, name) // the listing is newer than the merge
			continue
		}
		if _, ok := topics[name]; !ok {
			if t, ok := u.topics[name]; ok {
				topics[name] = t
			}
		}
	}
	u.setTopics(topics)
	return nil
}

// setTopics installs topics, as a new image version if they changed. u.mu
// is held.
func (u *Metadata) setTopics(topics map[string]streams.TopicMetadata) {
	if !maps.Equal(topics, u.topics) {
		u.version++
		u.topics = topics
		u.img = coordinator.NewMetadataImage(u.version, topics)
	}
}

// refreshTopics reads the metadata of names with a Metadata request of its
// own (a *kgo.Client does not serve it from its cache) and merges them into
// the image. A broker may learn of just-created topics a little after the
// controller answered CreateTopics, so topics it does not know yet are asked
// for again a few times.
func (u *Metadata) refreshTopics(ctx context.Context, cl kmsg.Requestor, names []string) error {
	pending := slices.Clone(names)
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			if attempt >= 20 {
				return fmt.Errorf("metadata of created topics %v: not known to the broker yet", pending)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(25 * time.Millisecond):
			}
		}
		req := kmsg.NewPtrMetadataRequest()
		for _, n := range pending {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(n)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("metadata of created topics: %w", err)
		}
		found := map[string]streams.TopicMetadata{}
		for _, t := range resp.Topics {
			if t.Topic == nil || t.ErrorCode != 0 || len(t.Partitions) == 0 {
				continue
			}
			found[*t.Topic] = streams.TopicMetadata{Name: *t.Topic, ID: t.TopicID, Partitions: int32(len(t.Partitions))}
		}
		if len(found) > 0 {
			u.mu.Lock()
			u.seq++
			topics := maps.Clone(u.topics)
			for n, t := range found {
				topics[n] = t
				u.added[n] = u.seq
			}
			u.setTopics(topics)
			u.mu.Unlock()
		}
		pending = slices.DeleteFunc(pending, func(n string) bool { _, ok := found[n]; return ok })
	}
	return nil
}
