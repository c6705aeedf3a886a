package coordinator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeats whose records Kafka 4.4 could not write get its answer,
// UNKNOWN_SERVER_ERROR, here with a message, and change nothing.
func TestRecordBounds(t *testing.T) {
	mib := strings.Repeat("x", 1<<20)
	half := strings.Repeat("y", 600<<10)
	memberMsg := func(member string, n int) string {
		return fmt.Sprintf("The metadata of member %s (instance id, rack id, client id and host, process id, user endpoint, client tags) makes a StreamsGroupMemberMetadata record of %d bytes, larger than the maximum record size of 1048588 bytes.", member, n)
	}
	bigTopology := func() *kmsg.StreamsGroupHeartbeatRequestTopology {
		t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		for i := range 30000 {
			st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
			st.SubtopologyID = fmt.Sprint(i)
			st.SourceTopics = []string{fmt.Sprintf("source-topic-of-subtopology-%08d", i)}
			t.Subtopologies = append(t.Subtopologies, st)
		}
		return &t
	}
	tags := func(n, size int) []kmsg.StreamsGroupHeartbeatRequestClientTag {
		out := make([]kmsg.StreamsGroupHeartbeatRequestClientTag, n)
		for i := range out {
			out[i] = kmsg.StreamsGroupHeartbeatRequestClientTag{Key: fmt.Sprint("k", i), Value: strings.Repeat("v", size)}
		}
		return out
	}
	cases := []struct {
		name string
		mut  func(r *kmsg.StreamsGroupHeartbeatRequest)
		msg  string
	}{
		{"group id over a key string", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Group = strings.Repeat("g", 32768) },
			"GroupId is 32768 bytes; a group id must be at most 32767 bytes (it is a string of the group's record keys)."},
		{"member id over a key string", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.MemberID = mib },
			"MemberId is 1048576 bytes; a member id must be at most 32767 bytes (it is a string of the member's record keys)."},
		{"process id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.ProcessID = &mib }, memberMsg("m1", 1048679)},
		{"instance id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.InstanceID = &mib }, memberMsg("m1", 1048681)},
		{"rack id", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.RackID = &mib }, memberMsg("m1", 1048681)},
		{"instance and rack ids together", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.InstanceID, r.RackID = &half, &half }, memberMsg("m1", 1228907)},
		{"user endpoint", func(r *kmsg.StreamsGroupHeartbeatRequest) {
			r.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: mib, Port: 8080}
		}, memberMsg("m1", 1048685)},
		{"client tags", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.ClientTags = tags(2000, 600) }, memberMsg("m1", 1216987)},
		{"topology", func(r *kmsg.StreamsGroupHeartbeatRequest) { r.Topology = bigTopology() },
			"The topology of group g (30000 subtopologies) makes a StreamsGroupTopology record of 1488979 bytes, larger than the maximum record size of 1048588 bytes."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			r := joinReq("g", "m1", "p1", sourceTopology("foo"))
			tc.mut(r)
			resp := h.hb(r)
			if resp.ErrorCode != kerr.UnknownServerError.Code || deref(resp.ErrorMessage) != tc.msg {
				t.Fatalf("error %d %q\nwant %d %q", resp.ErrorCode, trim(deref(resp.ErrorMessage)), kerr.UnknownServerError.Code, tc.msg)
			}
			if h.group(r.Group) != nil || len(h.log.batches) != 0 {
				t.Fatal("a refused heartbeat changed state")
			}
		})
	}
}

// Fields a heartbeat leaves null keep the member's values: the record of
// both together is checked too.
func TestRecordBoundsMergedMetadata(t *testing.T) {
	h := newHarness(t, nil)
	half := strings.Repeat("y", 600<<10)
	h.md.SetTopic("foo", 1)
	j := joinReq("g", "m1", "p1", sourceTopology("foo"))
	j.InstanceID = &half
	resp := h.ok(j)
	batches := len(h.log.batches)
	hb := hbReq("g", "m1", resp.MemberEpoch, nil)
	hb.InstanceID = nil
	hb.RackID = &half
	got := h.hb(hb)
	want := "The metadata of member m1 (instance id, rack id, client id and host, process id, user endpoint, client tags) makes a StreamsGroupMemberMetadata record of 1228926 bytes, larger than the maximum record size of 1048588 bytes."
	if got.ErrorCode != kerr.UnknownServerError.Code || deref(got.ErrorMessage) != want {
		t.Fatalf("error %d %q, want UNKNOWN_SERVER_ERROR %q", got.ErrorCode, trim(deref(got.ErrorMessage)), want)
	}
	if len(h.log.batches) != batches || h.group("g").Members["m1"].Meta.RackID != "" {
		t.Fatal("a refused heartbeat changed state")
	}
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
