package route

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A key's facts, written once per key here and read by every place that
// needs them: the groups its requests name (capture's lines, the
// splitters), the one group a request routes by (clusterGate), the answer
// that refuses a request (a group this instance does not serve, a handler
// past its time) and how long its handler may keep the client muted. A
// route row (row.go) carries its key's facts (route.keyFacts); the
// table test (keys_test.go) fails for a served key missing here, and for
// a row that names groups without a way to route them or a refusal.
// Before, each fact was a type switch of its own (the gate's group, the
// refusal, capture's groups), and a key missing from one was routed
// silently wrong: never hopped, or answered nil (the connection closed).

// keyFacts is one key's facts, untyped for the table.
type keyFacts struct {
	// groups is the group of each entry of a request, in request order;
	// "" for an entry naming no group (a topic or broker resource). Nil:
	// the key names no group.
	groups func(kmsg.Request) []string
	// group is the one group a request routes by (clusterGate); ok is
	// false when it names none or several (split by owner before the
	// gate). Nil: the key is not gated.
	group func(kmsg.Request) (string, bool)
	// split says how a request naming several groups splits by owner
	// (clusterSplit). Nil: the key does not split.
	split *splitter
	// refuse answers a request with err's code in every place the
	// key's answer carries one.
	refuse func(kmsg.Request, error) kmsg.Response
	// mute is the longest the key's handler may keep the client muted,
	// given d, that of any request (Options.MuteBound); nil: d.
	mute func(r kmsg.Request, d time.Duration) time.Duration
	// anyInstance: the key names groups, but every instance answers it
	// itself (FindCoordinator names the owner's host): neither gated nor
	// split.
	anyInstance bool
}

// facts types a key's facts by its request R.
type facts[R kmsg.Request] struct {
	// group is the one group a request is for, "" if none or several.
	// Without groups, it is also the request's only group.
	group  func(R) string
	groups func(R) []string
	split  *splitter
	refuse func(R, error) kmsg.Response
	mute   func(R, time.Duration) time.Duration
	// anyInstance as keyFacts'.
	anyInstance bool
}

func (f facts[R]) untyped() keyFacts {
	k := keyFacts{split: f.split, anyInstance: f.anyInstance}
	if f.group != nil {
		k.group = func(r kmsg.Request) (string, bool) {
			g := f.group(r.(R))
			return g, g != ""
		}
	}
	switch {
	case f.groups != nil:
		k.groups = func(r kmsg.Request) []string { return f.groups(r.(R)) }
	case f.group != nil:
		k.groups = func(r kmsg.Request) []string { return []string{f.group(r.(R))} }
	}
	if f.refuse != nil {
		k.refuse = func(r kmsg.Request, err error) kmsg.Response { return f.refuse(r.(R), err) }
	}
	if f.mute != nil {
		k.mute = func(r kmsg.Request, d time.Duration) time.Duration { return f.mute(r.(R), d) }
	}
	return k
}

// codeAnswer is the refusal of a key whose answer carries one error code
// (code): err's.
func codeAnswer[R kmsg.Request, P kmsg.Response](code func(P) *int16) func(R, error) kmsg.Response {
	return func(r R, err error) kmsg.Response {
		resp := r.ResponseKind().(P)
		*code(resp) = kafkaCode(err)
		return resp
	}
}

// Groups is the groups a request names, in request order: every group of
// a key that names several (DescribeGroups, OffsetFetch v8+), "" for an
// entry naming none (a topic resource of DescribeConfigs); nil for a key
// that names no group. The capture's lines and the splitters read it.
func Groups(req kmsg.Request) []string {
	if f, ok := keys[kmsg.Key(req.Key())]; ok && f.groups != nil {
		return f.groups(req)
	}
	return nil
}

// notServed is the key's refusal of req with err's code: a group this
// instance does not serve, or an error before the handler could answer.
// Nil for a key without one (none the routes serve: keys_test.go).
func notServed(req kmsg.Request, err error) kmsg.Response {
	if f, ok := keys[kmsg.Key(req.Key())]; ok && f.refuse != nil {
		return f.refuse(req, err)
	}
	return nil
}

// The slack a held request's bound keeps past its own wait (a held join's
// rebalance timeout), so the coordinator's answer at that time, and an
// owner's over a link, still reach the client; below the 5 s the Java
// client waits past the rebalance timeout.
const muteSlack = 2 * time.Second

// syncWait is how long a SyncGroup may be held (until the leader syncs):
// the forward of a SyncGroup waits as long.
const syncWait = 35 * time.Second

// keys is every key whose requests name groups, and every key the routes
// serve (keys_test.go).
var keys = map[kmsg.Key]keyFacts{
	kmsg.OffsetCommit: facts[*kmsg.OffsetCommitRequest]{
		group: func(r *kmsg.OffsetCommitRequest) string { return r.Group },
		refuse: func(r *kmsg.OffsetCommitRequest, err error) kmsg.Response {
			code := kafkaCode(err)
			return offsetCommitAnswer(r, func(int, int) (int16, bool) { return code, true })
		},
	}.untyped(),
	kmsg.OffsetFetch: facts[*kmsg.OffsetFetchRequest]{
		// One group: clusterGate's; a batch of v8+: split by owner.
		group: func(r *kmsg.OffsetFetchRequest) string {
			if r.Version >= 8 && len(r.Groups) != 1 {
				return ""
			}
			return fetchedGroup(r)
		},
		groups: offsetFetchSplit.groups,
		split:  offsetFetchSplit.splitter(),
		refuse: func(r *kmsg.OffsetFetchRequest, err error) kmsg.Response {
			// Java clients before 3.7 (kafka-clients 3.6's
			// ConsumerCoordinator) take COORDINATOR_NOT_AVAILABLE in an
			// OffsetFetch answer for a fatal error, and Kafka Streams
			// 3.6 dies of it while the group's owner fails over;
			// NOT_COORDINATOR, what Kafka answers while a group's
			// coordinator moves, makes every client look the
			// coordinator up again and retry.
			code := kafkaCode(err)
			if code == kerr.CoordinatorNotAvailable.Code {
				code, err = kerr.NotCoordinator.Code, fmt.Errorf("%w: %s", kerr.NotCoordinator, err.Error())
			}
			if r.Version >= 8 {
				return offsetFetchAll(r, err)
			}
			resp := kmsg.NewPtrOffsetFetchResponse()
			resp.ErrorCode = code
			return resp
		},
	}.untyped(),
	kmsg.FindCoordinator: facts[*kmsg.FindCoordinatorRequest]{
		groups: func(r *kmsg.FindCoordinatorRequest) []string {
			if r.CoordinatorType != 0 { // transactional ids
				return nil
			}
			if len(r.CoordinatorKeys) > 0 {
				return r.CoordinatorKeys
			}
			return []string{r.CoordinatorKey}
		},
		refuse: func(r *kmsg.FindCoordinatorRequest, err error) kmsg.Response {
			resp := kmsg.NewPtrFindCoordinatorResponse()
			code, msg := kafkaCode(err), err.Error()
			resp.ErrorCode, resp.ErrorMessage = code, &msg
			for _, key := range r.CoordinatorKeys {
				c := kmsg.NewFindCoordinatorResponseCoordinator()
				c.Key, c.NodeID, c.ErrorCode, c.ErrorMessage = key, -1, code, &msg
				resp.Coordinators = append(resp.Coordinators, c)
			}
			return resp
		},
		anyInstance: true,
	}.untyped(),
	kmsg.JoinGroup: facts[*kmsg.JoinGroupRequest]{
		group: func(r *kmsg.JoinGroupRequest) string { return r.Group },
		refuse: func(r *kmsg.JoinGroupRequest, err error) kmsg.Response {
			resp := kmsg.NewPtrJoinGroupResponse()
			resp.ErrorCode, resp.Generation, resp.MemberID = kafkaCode(err), -1, r.MemberID
			return resp
		},
		// A held join waits up to its rebalance timeout (v0: the
		// session timeout), as Kafka holds it.
		mute: func(r *kmsg.JoinGroupRequest, d time.Duration) time.Duration {
			t := r.RebalanceTimeoutMillis
			if r.Version == 0 {
				t = r.SessionTimeoutMillis
			}
			return max(d, time.Duration(t)*time.Millisecond+muteSlack)
		},
	}.untyped(),
	kmsg.Heartbeat: facts[*kmsg.HeartbeatRequest]{
		group:  func(r *kmsg.HeartbeatRequest) string { return r.Group },
		refuse: codeAnswer[*kmsg.HeartbeatRequest](func(p *kmsg.HeartbeatResponse) *int16 { return &p.ErrorCode }),
	}.untyped(),
	kmsg.LeaveGroup: facts[*kmsg.LeaveGroupRequest]{
		group:  func(r *kmsg.LeaveGroupRequest) string { return r.Group },
		refuse: codeAnswer[*kmsg.LeaveGroupRequest](func(p *kmsg.LeaveGroupResponse) *int16 { return &p.ErrorCode }),
	}.untyped(),
	kmsg.SyncGroup: facts[*kmsg.SyncGroupRequest]{
		group:  func(r *kmsg.SyncGroupRequest) string { return r.Group },
		refuse: codeAnswer[*kmsg.SyncGroupRequest](func(p *kmsg.SyncGroupResponse) *int16 { return &p.ErrorCode }),
		mute:   func(_ *kmsg.SyncGroupRequest, d time.Duration) time.Duration { return max(d, syncWait+muteSlack) },
	}.untyped(),
	kmsg.DescribeGroups: facts[*kmsg.DescribeGroupsRequest]{
		groups: describeGroupsSplit.groups,
		split:  describeGroupsSplit.splitter(),
		refuse: describeGroupsSplit.refuse,
	}.untyped(),
	kmsg.ListGroups: facts[*kmsg.ListGroupsRequest]{
		refuse: codeAnswer[*kmsg.ListGroupsRequest](func(p *kmsg.ListGroupsResponse) *int16 { return &p.ErrorCode }),
	}.untyped(),
	kmsg.TxnOffsetCommit: facts[*kmsg.TxnOffsetCommitRequest]{
		group: func(r *kmsg.TxnOffsetCommitRequest) string { return r.Group },
		refuse: func(r *kmsg.TxnOffsetCommitRequest, err error) kmsg.Response {
			code := kafkaCode(err)
			return txnOffsetCommitAnswer(r, func(int, int) (int16, bool) { return code, true })
		},
	}.untyped(),
	kmsg.DescribeConfigs: facts[*kmsg.DescribeConfigsRequest]{
		groups: describeConfigsSplit.groups,
		split:  describeConfigsSplit.splitter(),
		refuse: describeConfigsSplit.refuse,
	}.untyped(),
	kmsg.DeleteGroups: facts[*kmsg.DeleteGroupsRequest]{
		groups: deleteGroupsSplit.groups,
		split:  deleteGroupsSplit.splitter(),
		refuse: deleteGroupsSplit.refuse,
	}.untyped(),
	kmsg.IncrementalAlterConfigs: facts[*kmsg.IncrementalAlterConfigsRequest]{
		groups: incrementalAlterConfigsSplit.groups,
		split:  incrementalAlterConfigsSplit.splitter(),
		refuse: incrementalAlterConfigsSplit.refuse,
	}.untyped(),
	kmsg.OffsetDelete: facts[*kmsg.OffsetDeleteRequest]{
		group:  func(r *kmsg.OffsetDeleteRequest) string { return r.Group },
		refuse: codeAnswer[*kmsg.OffsetDeleteRequest](func(p *kmsg.OffsetDeleteResponse) *int16 { return &p.ErrorCode }),
	}.untyped(),
	// The KIP-848 consumer keys are not served; their groups are named
	// for the capture.
	kmsg.ConsumerGroupHeartbeat: facts[*kmsg.ConsumerGroupHeartbeatRequest]{
		group: func(r *kmsg.ConsumerGroupHeartbeatRequest) string { return r.Group },
	}.untyped(),
	kmsg.StreamsGroupHeartbeat: facts[*kmsg.StreamsGroupHeartbeatRequest]{
		group: func(r *kmsg.StreamsGroupHeartbeatRequest) string { return r.Group },
		refuse: func(r *kmsg.StreamsGroupHeartbeatRequest, err error) kmsg.Response {
			return heartbeatError(r, err)
		},
	}.untyped(),
	kmsg.ConsumerGroupDescribe: facts[*kmsg.ConsumerGroupDescribeRequest]{
		groups: consumerGroupDescribeSplit.groups,
		split:  consumerGroupDescribeSplit.splitter(),
		refuse: consumerGroupDescribeSplit.refuse,
	}.untyped(),
	kmsg.StreamsGroupDescribe: facts[*kmsg.StreamsGroupDescribeRequest]{
		// One group: clusterGate's; several: split by owner.
		group: func(r *kmsg.StreamsGroupDescribeRequest) string {
			if len(r.Groups) != 1 {
				return ""
			}
			return r.Groups[0]
		},
		groups: streamsGroupDescribeSplit.groups,
		split:  streamsGroupDescribeSplit.splitter(),
		refuse: streamsGroupDescribeSplit.refuse,
	}.untyped(),
}
