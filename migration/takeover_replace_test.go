package migration

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// withProcess gives a described member the process id pid in its
// SubscriptionInfo.
func withProcess(t *testing.T, dm *kmsg.DescribeGroupsResponseGroupMember, pid string) {
	t.Helper()
	sub, err := classicstreams.DecodeConsumerSubscription(dm.ProtocolMetadata)
	if err != nil {
		t.Fatal(err)
	}
	info, err := classicstreams.DecodeSubscriptionInfo(sub.UserData)
	if err != nil {
		t.Fatal(err)
	}
	if info.ProcessID, err = classicstreams.ParseProcessID(pid); err != nil {
		t.Fatal(err)
	}
	if sub.UserData, err = info.Encode(); err != nil {
		t.Fatal(err)
	}
	dm.ProtocolMetadata = sub.Encode()
}

// The takeover of a rolling step (docs/fast-roll.md §7 test 7): classic
// member a of process P heartbeated on a connection the proxy then saw
// close, and sent nothing since; the streams member of P joins and
// triggers the takeover. a is not carried over: it is in the fencing
// LeaveGroup with b, and its tasks are the joining member's at once. b,
// whose connection is open, is carried over. In virtual time: nothing waits
// for a's session.
func TestTakeoverReplacesMemberWhoseConnectionClosed(t *testing.T) {
	const pid = "0b5e6d1c-4a7f-4e1b-9c3d-2f8a7b6c5d4e"
	tk, up, _, c := takeoverFixture(t, nil, MigrationBidirectional)
	withProcess(t, &up.d.Members[0], pid)
	aConn, bConn := make(chan struct{}), make(chan struct{})
	for id, conn := range map[string]chan struct{}{"a": aConn, "b": bConn} {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation = "legacy", id, 7
		resp := kmsg.NewPtrHeartbeatResponse()
		tk.Observer.Observe(hb, resp)
		tk.Observer.ObserveConn(hb, resp, streams.ClientInfo{ConnID: 1, Closed: conn})
	}
	close(aConn)

	first := firstJoin()
	p := pid
	first.ProcessID = &p
	done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	tk.Run(first, streams.ClientInfo{ClientID: "s1"}, func(r coordinator.HeartbeatResult) { done <- r.Response })
	r := <-done
	if r.ErrorCode != 0 {
		t.Fatalf("takeover: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	if len(up.fenced) != 2 || up.fenced[0].MemberID != "a" || up.fenced[1].MemberID != "b" {
		t.Fatalf("fenced upstream %v, want a and b", up.fenced)
	}
	if err := classicCommit(c, "a"); err == nil {
		t.Fatal("the replaced member a may still commit")
	}
	if err := classicCommit(c, "b"); err != nil {
		t.Fatalf("the carried member b may not commit: %v", err)
	}
	var got []int32
	for _, ts := range r.ActiveTasks {
		got = append(got, ts.Partitions...)
	}
	if len(got) == 0 {
		t.Fatal("the joining member of a's process got none of a's tasks")
	}
	for _, p := range got {
		if p > 2 {
			t.Fatalf("the joining member got task %d, which b holds", p)
		}
	}
}
