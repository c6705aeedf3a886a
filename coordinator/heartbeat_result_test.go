package coordinator

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// hbResult runs one heartbeat and returns its whole result, creating
// nothing.
func (h *harness) hbResult(req *kmsg.StreamsGroupHeartbeatRequest, opts HeartbeatOptions) HeartbeatResult {
	h.t.Helper()
	var res *HeartbeatResult
	h.c.Heartbeat(req, streams.ClientInfo{ClientID: "client-" + req.MemberID, ClientHost: "/127.0.0.1"}, opts, func(r HeartbeatResult) { res = &r })
	if res == nil {
		h.t.Fatal("no result")
	}
	return *res
}

// TestHeartbeatResultCreatableTopics: the heartbeat returns its group's
// missing internal topics to the caller (Kafka's
// StreamsGroupHeartbeatResult.creatableTopics) once while their creation is
// in flight; a creation the caller did not make (the member may not
// CREATE them) is reported without an error, and the next heartbeat that
// still finds them missing returns them again.
func TestHeartbeatResultCreatableTopics(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 3)
	res := h.hbResult(joinReq("g", "m1", "p1", statefulTopology("foo")), HeartbeatOptions{})
	names := TopicNames(res.CreatableTopics)
	if !slices.Equal(names, []string{"app-store-changelog"}) || res.Response.ErrorCode != 0 {
		t.Fatalf("join: topics %v, code %d", names, res.Response.ErrorCode)
	}
	epoch := res.Response.MemberEpoch
	if res = h.hbResult(hbReq("g", "m1", epoch, nil), HeartbeatOptions{}); len(res.CreatableTopics) != 0 {
		t.Fatalf("returned again while in flight: %v", TopicNames(res.CreatableTopics))
	}
	h.c.TopicsCreated("g", names, nil) // not created: the member may not
	if res = h.hbResult(hbReq("g", "m1", epoch, nil), HeartbeatOptions{}); !slices.Equal(TopicNames(res.CreatableTopics), names) {
		t.Fatalf("after a creation not made: topics %v, want %v", TopicNames(res.CreatableTopics), names)
	}
	if !hasStatus(res.Response, streams.StatusMissingInternalTopics) {
		t.Fatalf("status %+v", res.Response.Status)
	}
}

// TestHeartbeatServedOnly: with ServedOnly a heartbeat of a group the
// coordinator does not hold runs nothing and says NotServed (the route
// then answers as Kafka would, or claims the group for a join); a group it
// holds is served as without it.
func TestHeartbeatServedOnly(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	for _, req := range []*kmsg.StreamsGroupHeartbeatRequest{
		joinReq("g", "m1", "p1", sourceTopology("foo")),
		hbReq("g", "m1", 3, nil),
	} {
		if res := h.hbResult(req, HeartbeatOptions{ServedOnly: true}); !res.NotServed || res.Response != nil {
			t.Fatalf("epoch %d of a group not held: %+v", req.MemberEpoch, res)
		}
	}
	if h.group("g") != nil {
		t.Fatal("a heartbeat not served created the group")
	}
	epoch := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo"))).MemberEpoch
	res := h.hbResult(hbReq("g", "m1", epoch, nil), HeartbeatOptions{ServedOnly: true})
	if res.NotServed || res.Response == nil || res.Response.ErrorCode != 0 {
		t.Fatalf("heartbeat of a group held: %+v", res)
	}
}
