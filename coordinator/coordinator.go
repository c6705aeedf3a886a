package coordinator

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// Options configure a Coordinator.
type Options struct {
	Config streams.Config
	// Clock defaults to the system clock.
	Clock Clock
	// Log defaults to a new MemoryLog.
	Log Log
	// Metadata supplies topic metadata; required.
	Metadata MetadataSource
	// CreateTopics: the callers of the operations that find internal
	// topics missing (a streams heartbeat, a takeover, a classic join or
	// sync) create them; those operations return them in their result
	// (HeartbeatResult.CreatableTopics) and the caller reports the outcome
	// with TopicsCreated. False: none are returned; they stay missing.
	CreateTopics bool
	// Assignor computes target assignments; defaults to Kafka's sticky task
	// assignor.
	Assignor assignor.TaskAssignor
	// Logger gets what Kafka's group coordinator logs (logging.go); the
	// zero Logger logs nothing.
	Logger zerolog.Logger
	// Events, if set, hears the group events (events.go).
	Events Events
	// GroupExpiration is how long a group stays Empty before its state is
	// deleted (group_expiration.go), Kafka's
	// offsets.retention.check.interval.ms; 0 keeps Empty groups.
	GroupExpiration time.Duration
	// OnGroupExpired, if set, is told (on the group's executor: it must
	// return at once) that an Empty group's state was deleted: its anchor
	// member leaves the upstream group.
	OnGroupExpired func(groupID string)
	// DisconnectExpiryHeartbeats is K of the disconnect expiry
	// (streams/disconnect_expiry.go, migration.disconnect.expiry.heartbeats):
	// a dynamic member whose connection closed is fenced K heartbeat
	// intervals later unless it sends a request first; 0 turns it off.
	DisconnectExpiryHeartbeats int
}

// Coordinator serves the streams groups. Its entry points never block: the
// work of each group runs on that group's own serial queue, and the response
// is delivered through a callback once the records it caused are in the log.
type Coordinator struct {
	clock    Clock
	log      Log
	metadata MetadataSource
	// createTopics: Options.CreateTopics.
	createTopics bool
	assignor     assignor.TaskAssignor
	configure    streams.ConfigureFunc
	logger       zerolog.Logger
	events       Events
	timings      Timings
	// expireAfter and onExpired: Options.GroupExpiration and
	// OnGroupExpired.
	expireAfter time.Duration
	onExpired   func(groupID string)
	// disconnectK: Options.DisconnectExpiryHeartbeats; stop ends the
	// goroutines that watch connections for their close (timers.go).
	disconnectK int
	stop        chan struct{}

	// configMu serializes group config changes end to end (validate,
	// append to the log, install) without holding mu across the append.
	configMu sync.Mutex

	mu     sync.Mutex
	cfg    streams.Config
	queues map[string]*groupQueue
	closed bool
	// claims are ownership claims (ownership.go) waiting for the join
	// that creates their group.
	claims map[string]*streams.OwnershipValue

	// queued counts the works run queued (QueuedWork).
	queued atomic.Uint64

	// inline runs group work on the caller's goroutine (tests in virtual
	// time); the group's mutex still serializes it.
	inline bool
}

// New returns a coordinator.
func New(opts Options) (*Coordinator, error) {
	if opts.Metadata == nil {
		return nil, errors.New("coordinator: a metadata source is required")
	}
	if opts.Assignor == nil {
		opts.Assignor = assignor.StickyTaskAssignor{}
	}
	if opts.Config.Defaults.SessionTimeout == 0 && opts.Config.Defaults.HeartbeatInterval == 0 {
		// An unset configuration means Kafka's defaults.
		maxSize, groups := opts.Config.MaxGroupSize, opts.Config.Groups
		opts.Config = streams.DefaultConfig()
		opts.Config.MaxGroupSize, opts.Config.Groups = maxSize, groups
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	if opts.DisconnectExpiryHeartbeats < 0 {
		return nil, fmt.Errorf("coordinator: disconnect expiry of %d heartbeats is negative", opts.DisconnectExpiryHeartbeats)
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Log == nil {
		opts.Log = NewMemoryLog()
	}
	return &Coordinator{
		clock:        opts.Clock,
		log:          opts.Log,
		metadata:     opts.Metadata,
		createTopics: opts.CreateTopics,
		assignor:     opts.Assignor,
		configure:    streams.DefaultConfigure,
		logger:       opts.Logger,
		events:       opts.Events,
		timings:      timings(opts.Events),
		expireAfter:  opts.GroupExpiration,
		onExpired:    opts.OnGroupExpired,
		disconnectK:  opts.DisconnectExpiryHeartbeats,
		stop:         make(chan struct{}),
		cfg:          opts.Config,
		queues:       map[string]*groupQueue{},
	}, nil
}

func (c *Coordinator) groupConfig(id string) streams.GroupConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Group(id)
}

func (c *Coordinator) maxGroupSize() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.MaxGroupSize
}

// Now reads the coordinator's clock, the one ClassicMemberState.LastHeartbeat
// is on.
func (c *Coordinator) Now() time.Time { return c.clock.Now() }

// AfterFunc runs f once d has passed on the coordinator's clock, so the
// migration's timers run in virtual time with a ManualClock.
func (c *Coordinator) AfterFunc(d time.Duration, f func()) Timer { return c.clock.AfterFunc(d, f) }
