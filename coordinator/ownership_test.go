package coordinator

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// fakeUpstream answers DescribeGroups with a fixed group (or error).
type fakeUpstream struct {
	group kmsg.DescribeGroupsResponseGroup
	err   error
	calls int
}

func (f *fakeUpstream) DescribeUpstreamGroup(_ context.Context, group string) (kmsg.DescribeGroupsResponseGroup, error) {
	f.calls++
	if f.err != nil {
		return kmsg.DescribeGroupsResponseGroup{}, f.err
	}
	g := f.group
	g.Group = group
	return g, nil
}

type takeoverFunc func(context.Context, kmsg.DescribeGroupsResponseGroup) error

func (f takeoverFunc) Takeover(ctx context.Context, g kmsg.DescribeGroupsResponseGroup) error {
	return f(ctx, g)
}

func TestOwnershipClaim(t *testing.T) {
	live := kmsg.DescribeGroupsResponseGroup{State: "Stable", ProtocolType: "consumer", Protocol: "stream",
		Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "m"}}}
	for _, tc := range []struct {
		name     string
		upstream fakeUpstream
		takeover Takeover
		source   string // "" when refused
		err      *kerr.Error
	}{
		{name: "unknown", upstream: fakeUpstream{group: kmsg.DescribeGroupsResponseGroup{State: "Dead"}}, source: streams.OwnershipNew},
		{name: "unknown on 4.x", upstream: fakeUpstream{group: kmsg.DescribeGroupsResponseGroup{ErrorCode: kerr.GroupIDNotFound.Code}}, source: streams.OwnershipNew},
		{name: "empty classic", upstream: fakeUpstream{group: kmsg.DescribeGroupsResponseGroup{State: "Empty", ProtocolType: "consumer"}}, source: streams.OwnershipOfflineMigration},
		{name: "anchored", upstream: fakeUpstream{group: kmsg.DescribeGroupsResponseGroup{State: "Stable", ProtocolType: "consumer", Protocol: AnchorProtocol,
			Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "anchor"}}}}, source: streams.OwnershipAnchored},
		{name: "live classic", upstream: fakeUpstream{group: live}, err: kerr.GroupIDNotFound},
		{name: "live classic, takeover", upstream: fakeUpstream{group: live}, source: streams.OwnershipTakeover,
			takeover: takeoverFunc(func(context.Context, kmsg.DescribeGroupsResponseGroup) error { return nil })},
		{name: "live classic, takeover refused", upstream: fakeUpstream{group: live}, err: kerr.RebalanceInProgress,
			takeover: takeoverFunc(func(context.Context, kmsg.DescribeGroupsResponseGroup) error { return kerr.RebalanceInProgress })},
		{name: "upstream down", upstream: fakeUpstream{err: errors.New("dial: refused")}, err: kerr.CoordinatorNotAvailable},
		{name: "coordinator moved", upstream: fakeUpstream{group: kmsg.DescribeGroupsResponseGroup{ErrorCode: kerr.NotCoordinator.Code}}, err: kerr.CoordinatorNotAvailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.md.SetTopic("foo", 2)
			up := tc.upstream
			o := NewOwnership(h.c, &up, tc.takeover)
			err := o.Claim(context.Background(), "app")
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("claim: %v, want %v", err, tc.err)
				}
				if o.Owns("app") {
					t.Fatal("refused group is owned")
				}
				return
			}
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			if !o.Owns("app") {
				t.Fatal("claimed group not owned")
			}
			// A second claim does not ask the upstream again.
			if err := o.Claim(context.Background(), "app"); err != nil || up.calls != 1 {
				t.Fatalf("second claim: %v after %d upstream calls", err, up.calls)
			}
			// The join creating the group records the ownership first.
			h.ok(joinReq("app", "m1", "p1", sourceTopology("foo")))
			recs := h.log.All()
			if len(recs) == 0 || recs[0].Type != streams.RecordOwnership {
				t.Fatalf("records %v, want the ownership first", recordTypes(recs))
			}
			v := recs[0].Value.(*streams.OwnershipValue)
			if v.Source != tc.source || v.ClaimedAtMs != testStart.UnixMilli() {
				t.Fatalf("ownership %+v, want source %s at %d", v, tc.source, testStart.UnixMilli())
			}
			gs, err := streams.Replay(nil, recs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gs["app"].Ownership, h.group("app").Ownership) || h.group("app").Ownership == nil {
				t.Fatalf("replayed ownership %+v, live %+v", gs["app"].Ownership, h.group("app").Ownership)
			}
			// The durable log's codec keeps it.
			key, value, err := streams.MarshalRecord(recs[0])
			if err != nil {
				t.Fatal(err)
			}
			back, err := streams.UnmarshalRecord(key, value)
			if err != nil || !reflect.DeepEqual(back, recs[0]) {
				t.Fatalf("codec round trip: %v %+v, want %+v", err, back, recs[0])
			}
			if !o.Owns("app") {
				t.Fatal("group not owned after the join")
			}
		})
	}
}

// TestOwnershipDeleted: deleting an owned group tombstones its ownership,
// and the group is no longer the proxy's.
func TestOwnershipDeleted(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	o := NewOwnership(h.c, &fakeUpstream{group: kmsg.DescribeGroupsResponseGroup{State: "Dead"}}, nil)
	if err := o.Claim(context.Background(), "app"); err != nil {
		t.Fatal(err)
	}
	h.ok(joinReq("app", "m1", "p1", sourceTopology("foo")))
	if got := h.c.SourceTopics("app"); !reflect.DeepEqual(got, []string{"foo"}) {
		t.Fatalf("source topics %v, want [foo]", got)
	}
	if got := h.c.SourceTopics("other"); got != nil {
		t.Fatalf("source topics of an unknown group %v", got)
	}
	leave := hbReq("app", "m1", -1, nil)
	h.ok(leave)
	var derr error = errors.New("not called")
	h.c.DeleteGroup("app", func(err error) { derr = err })
	if derr != nil {
		t.Fatal(derr)
	}
	last := h.log.last()
	if got := last[len(last)-1]; got.Type != streams.RecordOwnership || !got.Tombstone() {
		t.Fatalf("delete records %v, want an ownership tombstone last", recordTypes(last))
	}
	if o.Owns("app") {
		t.Fatal("deleted group still owned")
	}
}
