package coordinator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// UpstreamMetadata is a MetadataSource backed by the upstream cluster: it
// lists all topics every interval, and soon after RequestRefresh. Like a
// broker's metadata image, it knows every topic, so a group's first
// heartbeat sees its source topics.
type UpstreamMetadata struct {
	adm      *kadm.Client
	interval time.Duration
	minGap   time.Duration

	mu  sync.Mutex
	img *mapImage
	err error

	kick chan struct{}
}

// NewUpstreamMetadata returns a source fetching through adm every interval
// (default 10s). Run must be running for it to fetch.
func NewUpstreamMetadata(adm *kadm.Client, interval time.Duration) *UpstreamMetadata {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	return &UpstreamMetadata{
		adm:      adm,
		interval: interval,
		minGap:   250 * time.Millisecond,
		img:      &mapImage{version: 1, topics: map[string]TopicMetadata{}},
		kick:     make(chan struct{}, 1),
	}
}

func (u *UpstreamMetadata) Image() MetadataImage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.img
}

// RequestRefresh asks for a fetch soon; requests coalesce.
func (u *UpstreamMetadata) RequestRefresh([]string) {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// Refresh fetches now and waits for the result.
func (u *UpstreamMetadata) Refresh(ctx context.Context) error {
	return u.fetch(ctx)
}

// Run fetches until ctx ends.
func (u *UpstreamMetadata) Run(ctx context.Context) {
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

func (u *UpstreamMetadata) fetch(ctx context.Context) error {
	details, err := u.adm.ListTopics(ctx)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		u.err = fmt.Errorf("list upstream topics: %w", err)
		return u.err
	}
	u.err = nil
	topics := make(map[string]TopicMetadata, len(details))
	for name, d := range details {
		if d.Err != nil {
			continue
		}
		topics[name] = TopicMetadata{Name: name, ID: d.ID, Partitions: int32(len(d.Partitions))}
	}
	if !maps.Equal(topics, u.img.topics) {
		u.img = &mapImage{version: u.img.version + 1, topics: topics}
	}
	return nil
}

// UpstreamTopicCreator creates internal topics with CreateTopics on the
// upstream cluster, as a 4.x broker does for streams groups.
type UpstreamTopicCreator struct {
	adm     *kadm.Client
	timeout time.Duration
}

// NewUpstreamTopicCreator returns a creator using adm; each creation is
// bounded by timeout (default 30s).
func NewUpstreamTopicCreator(adm *kadm.Client, timeout time.Duration) *UpstreamTopicCreator {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &UpstreamTopicCreator{adm: adm, timeout: timeout}
}

func (u *UpstreamTopicCreator) CreateTopics(topics []CreatableTopic, done func(map[string]error)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
		defer cancel()
		failed := map[string]error{}
		for _, t := range topics {
			var configs map[string]*string
			if len(t.Configs) > 0 {
				configs = make(map[string]*string, len(t.Configs))
				for _, c := range t.Configs {
					v := c.Value
					configs[c.Key] = &v
				}
			}
			resp, err := u.adm.CreateTopic(ctx, t.Partitions, t.ReplicationFactor, configs, t.Name)
			if err == nil {
				err = resp.Err
			}
			if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				var ke *kerr.Error
				if errors.As(err, &ke) {
					failed[t.Name] = errors.New(ke.Message)
				} else {
					failed[t.Name] = err
				}
			}
		}
		done(failed)
	}()
}
