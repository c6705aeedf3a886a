package migration

import (
	"cmp"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// Holder holds a group's client requests at the proxy during a takeover
// (coordinatorGate).
type Holder interface {
	// Hold queues the group's requests from now on, and calls drained
	// once every request of the group already forwarded upstream has its
	// response.
	Hold(group string, drained func())
	// Release runs the queued requests, in arrival order, through the
	// normal path (which then finds the group here, or upstream).
	Release(group string)
}

// coordinatorGate is the Holder of the groups' own gates, on their
// executors (coordinator/migration_state.go), with the drain bounded by
// drainTimeout on the coordinator's clock: a forwarded request whose client
// connection closed never reports its response.
type coordinatorGate struct {
	c            *coordinator.Coordinator
	drainTimeout time.Duration
}

func (g coordinatorGate) Hold(group string, drained func()) {
	g.c.HoldClassic(group, g.drainTimeout, drained)
}

func (g coordinatorGate) Release(group string) { g.c.ReleaseClassic(group) }

// TakeoverUpstream is what a takeover needs of the upstream cluster. Like
// Holder's, its methods may be called on a coordinator group's goroutine and
// must not block: start the I/O and call back later.
type TakeoverUpstream interface {
	DescribeGroup(group string, done func(*kmsg.DescribeGroupsResponseGroup, error))
	// FenceMembers sends one LeaveGroup (v3+) naming the members.
	FenceMembers(group string, members []kmsg.LeaveGroupRequestMember, done func(error))
	// JoinAnchor joins the group's anchor member (upstream/anchor).
	JoinAnchor(group string, done func(error))
}

// TakeoverCoordinator is the coordinator's takeover part.
type TakeoverCoordinator interface {
	TakeOverClassicGroup(streams.ClassicGroupState, *kmsg.StreamsGroupHeartbeatRequest, streams.ClientInfo, func(coordinator.HeartbeatResult))
	AbandonTakeOver(groupID string, done func(error))
	// RenewSession re-arms a streams member's session timer from now:
	// the member the takeover answers late did not lose that time.
	RenewSession(groupID, memberID string, done func())
}

// Takeover runs the takeover of a classic Kafka Streams group when its first
// streams-protocol member joins (doc.go, "Takeover"): hold and drain the
// group's requests, read the classic group, build the streams group, fence
// the classic members upstream, join the anchor, release. Every failure
// leaves the group classic upstream, as it was, and answers the streams
// member with a retriable error (COORDINATOR_LOAD_IN_PROGRESS, retried by
// the client) or, when the policy forbids the upgrade of a non-empty
// classic group, GROUP_ID_NOT_FOUND as Kafka does.
type Takeover struct {
	Coordinator TakeoverCoordinator
	Upstream    TakeoverUpstream
	Gate        Holder
	Observer    *ClassicObserver
	Migration   MigrationConfig
	// TakenOver, if set, is told what was taken over (for the log) once
	// the takeover completed, before the group's requests are released.
	TakenOver func(streams.ClassicGroupState)
	// Clock runs the hold limit (the coordinator's); nil: no limit.
	Clock coordinator.Clock
	// HoldLimit bounds the hold; zero: takeoverHoldLimit.
	HoldLimit time.Duration
	Log       zerolog.Logger
}

// takeoverHoldLimit bounds how long a takeover holds the group's requests
// (the joining streams member's heartbeat, the classic members' heartbeats
// and (Txn)OffsetCommits): 5 s, half of the 10 s transaction.timeout.ms
// Kafka Streams sets under exactly-once, the shortest timer a held request
// runs on (a TxnOffsetCommit held past it has its producer fenced), and
// half of a short streams session (10 s; Kafka's default is 45 s), which is
// renewed anyway when the member gets its answer. Past it a
// takeover whose group is not built here yet gives up (the member retries);
// one whose group is built answers and releases, and finishes its upstream
// steps (fence, anchor join) behind.
const takeoverHoldLimit = 5 * time.Second

// ErrHoldLimit: a takeover gave up at its hold limit.
var ErrHoldLimit = errors.New("takeover hold limit passed")

// takeoverRun is one Run's progress, shared by its callbacks and its hold
// limit's timer.
type takeoverRun struct {
	mu sync.Mutex
	// answered: the streams member has its answer and the gate is
	// released (given up, done, or the hold limit passed).
	answered bool
	// built: the group is served here; res is the first member's answer.
	built bool
	res   coordinator.HeartbeatResult
	timer coordinator.Timer
}

// answer marks the run answered; false if it already was.
func (r *takeoverRun) answer() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answered {
		return false
	}
	r.answered = true
	if r.timer != nil {
		r.timer.Stop()
	}
	return true
}

// isAnswered reports whether the run is answered.
func (r *takeoverRun) isAnswered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.answered
}

// Run takes the group of first (a StreamsGroupHeartbeat join with its
// topology) over and answers it. The result carries the internal topics
// the takeover found missing (the caller creates them as for a join),
// also when a later step failed.
//
// The group's requests are held at most HoldLimit (takeoverHoldLimit): a
// takeover whose group is not built here by then gives up as any failure
// does; one whose group is built answers the member and releases the
// group's requests, which are served here, and finishes fencing the
// classic members and joining the anchor behind (abandoning the group, as
// before, if those fail).
func (tk *Takeover) Run(first *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo, respond func(coordinator.HeartbeatResult)) {
	group := first.Group
	run := &takeoverRun{}
	var topics []streams.CreatableTopic
	retriable := func(code *kerr.Error, why error) {
		if !run.answer() {
			return
		}
		tk.Gate.Release(group)
		respond(coordinator.HeartbeatResult{Response: takeoverRefused(first, code, why), CreatableTopics: topics})
	}
	// succeeded answers the member its join (its session renewed: the
	// time its heartbeat was held is not its to lose) and releases the
	// group's requests.
	succeeded := func(res coordinator.HeartbeatResult) {
		if !run.answer() {
			return
		}
		tk.Coordinator.RenewSession(group, first.MemberID, func() {
			tk.Gate.Release(group)
			respond(res)
		})
	}
	limit := cmp.Or(tk.HoldLimit, takeoverHoldLimit)
	if tk.Clock != nil {
		run.mu.Lock()
		run.timer = tk.Clock.AfterFunc(limit, func() {
			run.mu.Lock()
			built, res, answered := run.built, run.res, run.answered
			run.mu.Unlock()
			switch {
			case answered:
			case !built:
				retriable(kerr.CoordinatorLoadInProgress, fmt.Errorf("the group's requests were held %v (the takeover's limit) before it was built here: %w", limit, ErrHoldLimit))
			default:
				tk.Log.Warn().Str("group", group).Dur("held", limit).Msg("takeover: the classic members' fencing and the anchor's join upstream did not finish within the hold limit; the group is served here and its requests go on, the takeover finishes behind")
				succeeded(res)
			}
		})
		run.mu.Unlock()
	}
	// While the group drains, a member rejoining ends the attempt (see
	// WatchRejoin): the group's requests go on upstream, and the streams
	// member retries once the upstream group is stable again.
	draining := func() bool { return true }
	if tk.Observer != nil {
		draining = tk.Observer.WatchRejoin(group, func() {
			retriable(kerr.CoordinatorLoadInProgress, fmt.Errorf("a member of %s rejoined while the takeover drained: %w", group, ErrNotStable))
		})
	}
	tk.Gate.Hold(group, func() {
		if !draining() || run.isAnswered() {
			return // given up: a member rejoined, or the hold limit passed
		}
		tk.Upstream.DescribeGroup(group, func(d *kmsg.DescribeGroupsResponseGroup, err error) {
			if run.isAnswered() {
				return
			}
			if err != nil {
				retriable(kerr.CoordinatorLoadInProgress, err)
				return
			}
			state, err := ClassicGroupStateOf(d, tk.Observer)
			switch {
			case errors.Is(err, ErrNotStable):
				retriable(kerr.CoordinatorLoadInProgress, err)
				return
			case err != nil:
				retriable(kerr.GroupIDNotFound, err)
				return
			case len(state.Members) > 0 && !tk.Migration.PolicyFor(group).AllowsUpgrade():
				retriable(kerr.GroupIDNotFound, fmt.Errorf("migration.policy %v does not allow the upgrade of a non-empty classic group", tk.Migration.PolicyFor(group)))
				return
			}
			tk.Coordinator.TakeOverClassicGroup(state, first, client, func(res coordinator.HeartbeatResult) {
				topics = res.CreatableTopics
				if res.Response.ErrorCode != 0 {
					if run.answer() {
						tk.Gate.Release(group)
						respond(res)
					}
					return
				}
				run.mu.Lock()
				late := run.answered
				run.built, run.res = !late, res
				run.mu.Unlock()
				if late {
					// Given up at the hold limit while the group was
					// being built: nothing upstream changed yet.
					tk.Coordinator.AbandonTakeOver(group, func(error) {})
					return
				}
				tk.fenceAndAnchor(state, func(err error) {
					if err != nil {
						tk.Coordinator.AbandonTakeOver(group, func(error) {
							if run.isAnswered() {
								tk.Log.Warn().Str("group", group).Err(err).Msg("takeover abandoned after the hold limit released the group's requests: the group is left to the upstream classic coordinator, its members rejoin there")
								return
							}
							retriable(kerr.CoordinatorLoadInProgress, err)
						})
						return
					}
					if tk.Observer != nil {
						tk.Observer.Forget(group)
					}
					if tk.TakenOver != nil {
						tk.TakenOver(state)
					}
					if run.isAnswered() {
						tk.Log.Info().Str("group", group).Msg("takeover: the classic members are fenced and the anchor joined upstream, after the hold limit")
					}
					succeeded(res)
				})
			})
		})
	})
}

// takeoverRefused is the answer to the streams member whose join did not
// take its group over (yet): code, with why as the message.
func takeoverRefused(first *kmsg.StreamsGroupHeartbeatRequest, code *kerr.Error, why error) *kmsg.StreamsGroupHeartbeatResponse {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = first.Version
	resp.ErrorCode = code.Code
	msg := fmt.Sprintf("takeover of classic group %s: %v", first.Group, why)
	resp.ErrorMessage = &msg
	return resp
}

// fenceAndAnchor removes the classic members from the upstream group (their
// sessions now live here), then joins the anchor, which the members' protocol
// would have refused while they were in.
func (tk *Takeover) fenceAndAnchor(state streams.ClassicGroupState, done func(error)) {
	anchor := func() {
		tk.Upstream.JoinAnchor(state.GroupID, func(err error) {
			if err != nil {
				err = fmt.Errorf("anchor join: %w", err)
			}
			done(err)
		})
	}
	if len(state.Members) == 0 {
		anchor()
		return
	}
	members := make([]kmsg.LeaveGroupRequestMember, 0, len(state.Members))
	for _, m := range state.Members {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = m.MemberID
		if m.InstanceID != "" {
			id := m.InstanceID
			lm.InstanceID = &id
		}
		reason := "streamshift: taken over by the streams group"
		lm.Reason = &reason
		members = append(members, lm)
	}
	tk.Upstream.FenceMembers(state.GroupID, members, func(err error) {
		if err != nil {
			done(fmt.Errorf("fence classic members upstream: %w", err))
			return
		}
		anchor()
	})
}
