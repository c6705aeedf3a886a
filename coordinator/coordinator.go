package coordinator

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/assignor"
)

// ClientInfo is what the proxy knows of the connection a request came on.
type ClientInfo struct {
	ClientID   string // the request header's client id
	ClientHost string // the client's address, as Kafka reports it ("/10.0.0.1")
}

// Options configure a Coordinator.
type Options struct {
	Config Config
	// Clock defaults to the system clock.
	Clock Clock
	// Log defaults to a new MemoryLog.
	Log Log
	// Metadata supplies topic metadata; required.
	Metadata MetadataSource
	// TopicCreator creates missing internal topics; nil leaves them missing.
	TopicCreator TopicCreator
	// Assignor computes target assignments; defaults to Kafka's sticky task
	// assignor.
	Assignor assignor.TaskAssignor
	// Logger gets what Kafka's group coordinator logs (logging.go); the
	// zero Logger logs nothing.
	Logger zerolog.Logger
}

// Coordinator serves the streams groups. Its entry points never block: the
// work of each group runs on that group's own serial queue, and the response
// is delivered through a callback once the records it caused are in the log.
type Coordinator struct {
	clock     Clock
	log       Log
	metadata  MetadataSource
	creator   TopicCreator
	assignor  assignor.TaskAssignor
	configure configureFunc
	logger    zerolog.Logger

	// configMu serializes group config changes end to end (validate,
	// append to the log, install) without holding mu across the append.
	configMu sync.Mutex

	mu     sync.Mutex
	cfg    Config
	shards map[string]*shard
	closed bool
	// claims are ownership claims (ownership.go) waiting for the join
	// that creates their group.
	claims map[string]*OwnershipValue

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
		opts.Config = DefaultConfig()
		opts.Config.MaxGroupSize, opts.Config.Groups = maxSize, groups
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Log == nil {
		opts.Log = NewMemoryLog()
	}
	return &Coordinator{
		clock:     opts.Clock,
		log:       opts.Log,
		metadata:  opts.Metadata,
		creator:   opts.TopicCreator,
		assignor:  opts.Assignor,
		configure: defaultConfigure,
		logger:    opts.Logger,
		cfg:       opts.Config,
		shards:    map[string]*shard{},
	}, nil
}

// Handle serves a request if it is one the coordinator serves (keys 88 and
// 89) and reports whether it took it; respond is called exactly once, from
// another goroutine unless the request is invalid or the coordinator closed.
func (c *Coordinator) Handle(req kmsg.Request, client ClientInfo, respond func(kmsg.Response)) bool {
	switch r := req.(type) {
	case *kmsg.StreamsGroupHeartbeatRequest:
		c.StreamsGroupHeartbeat(r, client, func(resp *kmsg.StreamsGroupHeartbeatResponse) { respond(resp) })
		return true
	case *kmsg.StreamsGroupDescribeRequest:
		c.StreamsGroupDescribe(r, func(resp *kmsg.StreamsGroupDescribeResponse) { respond(resp) })
		return true
	}
	return false
}

// StreamsGroupHeartbeat serves one heartbeat.
func (c *Coordinator) StreamsGroupHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo, respond func(*kmsg.StreamsGroupHeartbeatResponse)) {
	if resp := validateHeartbeat(req); resp != nil {
		respond(resp)
		return
	}
	c.run(req.Group, func(s *shard) {
		respond(c.heartbeat(s, req, client))
	}, func(e *coordError) { respond(heartbeatError(req, e)) })
}

// SetGroupConfig sets (or, with nil, removes) a group's overrides. The new
// configuration applies from the group's next heartbeat; a change of the
// standby replicas bumps the group epoch then.
func (c *Coordinator) SetGroupConfig(groupID string, o *GroupConfigOverride) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o == nil {
		delete(c.cfg.Groups, groupID)
		return nil
	}
	if err := o.apply(c.cfg.Defaults).ValidateWithin(c.cfg.bounds()); err != nil {
		return fmt.Errorf("streams group %q: %w", groupID, err)
	}
	groups := make(map[string]GroupConfigOverride, len(c.cfg.Groups)+1)
	for k, v := range c.cfg.Groups {
		groups[k] = v
	}
	groups[groupID] = *o
	c.cfg.Groups = groups
	return nil
}

func (c *Coordinator) groupConfig(id string) GroupConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.group(id)
}

func (c *Coordinator) maxGroupSize() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.MaxGroupSize
}

// Load replays records (e.g. read back from a durable log at start) and arms
// the timers of every loaded member, as Kafka does when a coordinator loads.
func (c *Coordinator) Load(records []Record) error {
	start := time.Now()
	loaded := len(records)
	byGroup := map[string][]Record{}
	var order []string
	records, err := c.loadGroupConfigs(records)
	if err != nil {
		return err
	}
	for _, r := range records {
		if _, ok := byGroup[r.GroupID]; !ok {
			order = append(order, r.GroupID)
		}
		byGroup[r.GroupID] = append(byGroup[r.GroupID], r)
	}
	var errs []error
	for _, id := range order {
		recs := byGroup[id]
		done := make(chan error, 1)
		var notRun *coordError // closed (or unloaded) under the load
		c.run(id, func(s *shard) {
			gs, err := Replay(nil, recs)
			if err != nil {
				done <- fmt.Errorf("load %s: %w", id, err)
				return
			}
			// A group loaded over one held already starts afresh: the
			// old group's timers are left to fire as no-ops.
			s.timers = nil
			s.group = gs[id]
			if s.group != nil {
				c.logLoaded(s.group)
				c.onLoaded(s)
			}
			done <- nil
		}, func(e *coordError) { notRun = e; done <- nil })
		if err := <-done; err != nil {
			errs = append(errs, err)
		}
		if notRun != nil {
			return fmt.Errorf("load %s: %w", id, notRun)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.logLoadFinished(loaded, len(order), time.Since(start))
	return nil
}

// Owns reports whether the coordinator holds a streams group with this id.
func (c *Coordinator) Owns(groupID string) bool {
	c.mu.Lock()
	_, ok := c.shards[groupID]
	c.mu.Unlock()
	if !ok {
		return false
	}
	ch := make(chan bool, 1)
	c.run(groupID, func(s *shard) { ch <- s.group != nil }, func(*coordError) { ch <- false })
	return <-ch
}

// change collects the records of one state change of one group. Records are
// replayed into the group as they are emitted, so later steps see them; if
// the change fails or its append fails, the group is rebuilt from the log.
type change struct {
	c       *Coordinator
	s       *shard
	g       *Group
	cfg     GroupConfig
	now     time.Time
	records []Record
	created bool // the group did not exist before this change
	// classic is the classic metadata of the JoinGroup this change runs
	// as a heartbeat (classic_join.go); nil for streams heartbeats.
	classic *ClassicMemberMetadata
}

func (c *Coordinator) newChange(s *shard) *change {
	return &change{c: c, s: s, g: s.group, cfg: c.groupConfig(s.id), now: c.clock.Now()}
}

func (ch *change) emit(r Record) {
	r.GroupID = ch.g.ID
	ch.records = append(ch.records, r)
	if err := ch.g.replay(r); err != nil {
		// Only this package builds records; a failure here is a bug.
		panic(fmt.Sprintf("coordinator: replaying own record %v: %v", r, err))
	}
}

// commit appends the change's records to the log. On failure the group goes
// back to what the log holds.
func (ch *change) commit() error {
	if len(ch.records) == 0 {
		return nil
	}
	if err := ch.c.log.Append(ch.s.id, ch.records); err != nil {
		n := len(ch.records) // rollback forgets them
		ch.c.logAppendFailure(ch.s.id, n, err)
		ch.rollback()
		return fmt.Errorf("append %d records of group %s: %w", n, ch.s.id, err)
	}
	ch.records = nil
	return nil
}

// rollback discards the change: the group is rebuilt from its records in the
// log; what lives in memory only is kept.
func (ch *change) rollback() {
	if len(ch.records) == 0 && !ch.created {
		return
	}
	ch.records = nil
	s := ch.s
	var mem groupMemory
	if s.group != nil {
		mem = s.group.mem
	}
	recs, err := ch.c.log.Load(s.id)
	var g *Group
	if err == nil {
		var gs Groups
		gs, err = Replay(nil, recs)
		g = gs[s.id]
	}
	if err != nil || g == nil {
		s.stopTimers()
		s.group = nil
		return
	}
	g.mem = mem
	s.group = g
	ch.g = g
}
