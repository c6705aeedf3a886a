package coordinator

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// FuzzHeartbeat feeds arbitrary StreamsGroupHeartbeat bytes, decoded as the
// proxy decodes them, to a group with two members: no input may panic, and
// the state must stay what the log replays to.
func FuzzHeartbeat(f *testing.F) {
	seed := func(r *kmsg.StreamsGroupHeartbeatRequest) { f.Add(byte(r.Version), r.AppendTo(nil)) }
	seed(joinReq("g", "m3", "p3", statefulTopology("foo")))
	seed(hbReq("g", "m1", 2, &streams.TaskSets{Active: tasks("0", 0, 1)}))
	seed(hbReq("g", "m2", 3, nil))
	leave := hbReq("g", "m1", -2, nil)
	leave.InstanceID = strp("i1")
	seed(leave)
	f.Fuzz(func(t *testing.T, version byte, raw []byte) {
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Version = int16(version % 2)
		if err := req.ReadFrom(raw); err != nil {
			return
		}
		timer := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("hang on %+v", req)) })
		defer timer.Stop()
		h := newHarness(t, nil)
		h.md.SetTopic("foo", 4)
		h.md.SetTopic("app-store-changelog", 4)
		j := joinReq("g", "m1", "p1", statefulTopology("foo"))
		j.InstanceID = strp("i1")
		h.ok(j)
		h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
		h.hb(req) // checks replay(log) == state
		h.advance(streams.DefaultSessionTimeout)
	})
}
