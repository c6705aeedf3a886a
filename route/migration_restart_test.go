package route

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/migration"
)

// classicRetriable are the answers a classic Kafka Streams member survives
// (AbstractCoordinator rejoins or backs off and retries). Anything else a
// restart makes the proxy send, INCONSISTENT_GROUP_PROTOCOL or
// GROUP_ID_NOT_FOUND above all, puts the instance in ERROR.
var classicRetriable = map[int16]bool{
	0:                                   true,
	kerr.UnknownMemberID.Code:           true,
	kerr.IllegalGeneration.Code:         true,
	kerr.RebalanceInProgress.Code:       true,
	kerr.MemberIDRequired.Code:          true,
	kerr.CoordinatorLoadInProgress.Code: true,
	kerr.CoordinatorNotAvailable.Code:   true,
	kerr.NotCoordinator.Code:            true,
}

// restartedClassic drives a classic member the way Kafka's consumer does
// after its coordinator lost it: UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION
// reset its member id and generation (its tasks are lost), a retriable
// error is retried; every answer must be one it survives.
type restartedClassic struct {
	*classicMember
	answers map[int16]int // every error code it got, counted
}

func (r *restartedClassic) check(api string, code int16) int16 {
	r.t.Helper()
	r.answers[code]++
	if !classicRetriable[code] {
		r.t.Fatalf("%s answered %v to a classic member after the restart: fatal to Kafka Streams", api, kerr.ErrorForCode(code))
	}
	if code == kerr.UnknownMemberID.Code || code == kerr.IllegalGeneration.Code {
		r.id, r.generation, r.owned = "", -1, nil
	}
	return code
}

// rejoin joins until the group takes the member (MEMBER_ID_REQUIRED
// taken as the consumer does), then syncs; it reports the JoinGroup answer.
func (r *restartedClassic) rejoin(deadline time.Time) *kmsg.JoinGroupResponse {
	r.t.Helper()
	for {
		resp, err := r.joinRequest().RequestWith(r.e.ctx, r.conn())
		if err != nil {
			r.t.Fatal(err)
		}
		switch r.check("JoinGroup", resp.ErrorCode) {
		case 0:
			r.id, r.generation = resp.MemberID, resp.Generation
			return resp
		case kerr.MemberIDRequired.Code:
			r.id = resp.MemberID
			continue
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the classic member never got back into the group; answers %v", r.answers)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recoveryWindow is the tests' RecoveryWindow.
const recoveryWindow = 10 * time.Second

// restartMixedGroup takes group "legacy" over (a classic member c, a
// streams member s1 joined after it), then restarts the proxy without
// state; it returns c and s1's epoch before the restart.
func restartMixedGroup(t *testing.T, clock coordinator.Clock) (*env, *restartedClassic, int32) {
	e := newEnv(t, func(e *env) {
		e.migration, e.recoveryWindow, e.clock = &migration.MigrationConfig{}, recoveryWindow, clock
	})
	c := &classicMember{e: e, t: t}
	c.join()
	c.sync(true)
	if code := c.heartbeat(); code != 0 {
		t.Fatalf("heartbeat upstream: %v", kerr.ErrorForCode(code))
	}
	resp, err := join("legacy", "s1").RequestWith(e.ctx, e.broker)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("takeover join: %v %v", err, resp)
	}
	if code := c.heartbeat(); !classicRetriable[code] {
		t.Fatalf("classic heartbeat inside the streams group: %v", kerr.ErrorForCode(code))
	}
	e.restart()
	return e, &restartedClassic{classicMember: c, answers: map[int16]int{}}, resp.MemberEpoch
}

// TestRestartWithoutStateMixedGroup: a streamshift restarted without the
// durable log during an online migration, with a classic member inside the
// streams group. The classic member's requests reach the proxy first: its
// heartbeat and commit get UNKNOWN_MEMBER_ID, and its rejoins, which the
// upstream group (holding only the anchor) refuses with
// INCONSISTENT_GROUP_PROTOCOL, get COORDINATOR_LOAD_IN_PROGRESS, then are
// held until the streams member's rejoin brings the topology back; then it
// joins the streams group. No answer is fatal to Kafka Streams, and the anchor stays.
func TestRestartWithoutStateMixedGroup(t *testing.T) {
	e, c, epoch := restartMixedGroup(t, nil)
	c.check("Heartbeat", c.heartbeat())
	c.check("OffsetCommit", c.commit(11))
	if c.id != "" {
		t.Fatalf("the classic member kept its member id %s after the restart", c.id)
	}
	resp, err := c.joinRequest().RequestWith(e.ctx, c.conn())
	if err != nil {
		t.Fatal(err)
	}
	if c.check("JoinGroup", resp.ErrorCode) != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("classic rejoin before any streams member came back: %v, want COORDINATOR_LOAD_IN_PROGRESS", kerr.ErrorForCode(resp.ErrorCode))
	}
	// The retry is held until the group is back.
	held := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		resp, err := c.joinRequest().RequestWith(e.ctx, c.conn())
		if err != nil {
			resp = nil
		}
		held <- resp
	}()
	select {
	case resp := <-held:
		t.Fatalf("classic rejoin answered before any streams member came back: %+v", resp)
	case <-time.After(300 * time.Millisecond):
	}

	// The streams member learns it is unknown and rejoins.
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = "legacy", "s1", epoch
	if resp, err := hb.RequestWith(e.ctx, e.broker); err != nil || resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("streams heartbeat after the restart: %v %v, want UNKNOWN_MEMBER_ID", err, resp)
	}
	if resp, err := join("legacy", "s1").RequestWith(e.ctx, e.broker); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("streams rejoin after the restart: %v %v", err, resp)
	}
	select {
	case resp := <-held:
		if resp == nil {
			t.Fatal("the held classic rejoin failed")
		}
		if c.check("JoinGroup", resp.ErrorCode) == kerr.MemberIDRequired.Code {
			c.id = resp.MemberID
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held classic rejoin was not answered after the streams member came back")
	}
	c.rejoin(time.Now().Add(20 * time.Second))
	c.sync(false)
	c.check("Heartbeat", c.heartbeat())

	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Groups = []string{"legacy"}
	dresp, err := dreq.RequestWith(e.ctx, e.broker)
	if err != nil {
		t.Fatal(err)
	}
	if g := dresp.Groups[0]; g.ErrorCode != 0 || len(g.Members) != 2 {
		t.Fatalf("streams group after the restart: %v, %d members, want the streams and the classic member", kerr.ErrorForCode(g.ErrorCode), len(g.Members))
	}
	described, err := e.adm.DescribeGroups(e.ctx, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	if up := described["legacy"]; len(up.Members) != 1 || up.Protocol != "streamshift" {
		t.Fatalf("upstream group after the restart: state %s protocol %s members %d, want the anchor only", up.State, up.Protocol, len(up.Members))
	}
	if c.answers[kerr.CoordinatorLoadInProgress.Code] == 0 {
		t.Fatal("no rejoin waited for the group to load")
	}
}

// TestRestartWithoutStateClassicOnly: the same restart, but no streams
// member comes back (it stopped with the proxy, or the proxy died during a
// hand-back): once the recovery window has passed, the group is handed
// back. The anchor leaves, the classic member's join goes upstream and it
// leads the broker's classic group again; no answer was fatal.
func TestRestartWithoutStateClassicOnly(t *testing.T) {
	clock := coordinator.NewManualClock(time.Now())
	e, c, _ := restartMixedGroup(t, clock)
	c.check("Heartbeat", c.heartbeat())
	resp, err := c.joinRequest().RequestWith(e.ctx, c.conn())
	if err != nil {
		t.Fatal(err)
	}
	if c.check("JoinGroup", resp.ErrorCode) != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("classic rejoin after the restart: %v, want COORDINATOR_LOAD_IN_PROGRESS", kerr.ErrorForCode(resp.ErrorCode))
	}
	// A join held now or sent after the window is handed back alike.
	clock.Advance(recoveryWindow)
	jr := c.rejoin(time.Now().Add(20 * time.Second))
	if jr.LeaderID != c.id {
		t.Fatalf("the classic member does not lead the upstream group after the recovery's hand-back: %+v", jr)
	}
	if got := c.sync(true); len(got) != 4 {
		t.Fatalf("classic member owns %v after the hand-back", got)
	}
	if e.coord.Owns("legacy") {
		t.Fatal("the coordinator holds the group after the hand-back")
	}
	described, err := e.adm.DescribeGroups(e.ctx, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	up := described["legacy"]
	if len(up.Members) != 1 || up.Protocol != "stream" || up.Members[0].MemberID != c.id {
		t.Fatalf("upstream group after the hand-back: state %s protocol %s members %+v", up.State, up.Protocol, up.Members)
	}
	if code := c.check("OffsetCommit", c.commit(12)); code != 0 {
		t.Fatalf("classic commit upstream after the hand-back: %v", kerr.ErrorForCode(code))
	}
	if c.answers[kerr.CoordinatorLoadInProgress.Code] == 0 {
		t.Fatal("no rejoin waited for the group to load")
	}
}
