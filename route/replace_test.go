package route

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/migration"
)

// TestReplaceOnClosedConnection (issue #28, replacement by identity through
// the proxy): a classic member of the served group on a connection of its
// own is not replaced by a streams join of its process while that
// connection is open (a live twin); once its client closes, the proxy's
// close reaches the coordinator and the next such join replaces it at once;
// the old member's next request, on a new connection, is UNKNOWN_MEMBER_ID.
func TestReplaceOnClosedConnection(t *testing.T) {
	e := newEnv(t, withMigration(migration.MigrationBidirectional))
	if resp, err := join("legacy", "s1").RequestWith(e.ctx, e.broker); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("streams join: %v %v", err, resp)
	}
	cl := e.client(kgo.ClientID("app-b"))
	b := &classicMember{e: e, t: t, broker: e.coordinatorOf("legacy", cl)}
	b.join() // served by the streams group
	b.sync(false)
	pid := classicstreams.ProcessID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}.String()
	joinAs := func(member string) {
		t.Helper()
		req := join("legacy", member)
		req.ProcessID = &pid
		if resp, err := req.RequestWith(e.ctx, e.broker); err != nil || resp.ErrorCode != 0 {
			t.Fatalf("streams join %s: %v %v", member, err, resp)
		}
	}
	leave := func(member string) {
		t.Helper()
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = "legacy", member, -1
		if resp, err := req.RequestWith(e.ctx, e.broker); err != nil || resp.ErrorCode != 0 {
			t.Fatalf("streams leave %s: %v %v", member, err, resp)
		}
	}

	joinAs("twin")
	if !slices.Contains(e.streamsMembers("legacy"), b.id) {
		t.Fatal("a live classic member was replaced")
	}
	leave("twin")

	cl.Close()
	// The close reaches the coordinator asynchronously: until it has,
	// a join is an ordinary new member, which leaves again.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		id := fmt.Sprintf("s2-%d", i)
		joinAs(id)
		if !slices.Contains(e.streamsMembers("legacy"), b.id) {
			break
		}
		leave(id)
		if time.Now().After(deadline) {
			t.Fatal("the classic member was never replaced after its connection closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.broker = e.memberConn("app-b-again")
	if code := b.heartbeat(); code != kerr.UnknownMemberID.Code {
		t.Fatalf("replaced member's heartbeat: %v", kerr.ErrorForCode(code))
	}
}

// streamsMembers lists the member ids of a streams group the proxy serves.
func (e *env) streamsMembers(group string) []string {
	e.t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(e.ctx, e.broker)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		e.t.Fatalf("describe %s: %v %+v", group, err, resp)
	}
	var ids []string
	for _, m := range resp.Groups[0].Members {
		ids = append(ids, m.MemberID)
	}
	return ids
}
