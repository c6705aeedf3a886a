package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/proxy/peer"
)

// TestClusterAdminThroughAnyInstance: the admin requests naming several
// groups (or none) answer the same through every instance
// (docs/one-address.md §4): kadm through each of two instances lists the
// groups (both instances' served streams groups and a plain consumer
// group), describes them, fetches their offsets in one batched request,
// deletes groups owned by either instance, and alters and describes group
// configs of groups of either owner and of the plain group. With a peer
// down, ListGroups answers COORDINATOR_NOT_AVAILABLE rather than an
// incomplete list.
func TestClusterAdminThroughAnyInstance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	// Each instance's internal listener, as it was bound (the instances
	// start one after the other).
	listenerOf := map[string]*peer.Listener{}
	ins, owners, _ := twoInstancesWith(t, ctx, func(id string) serveTweak {
		return serveTweak{links: func(o *cluster.LinkOptions) {
			o.Listening = func(pl *peer.Listener) { listenerOf[id] = pl }
		}}
	})
	a, b := ins[0], ins[1]
	sA, sB := groupOwnedBy(owners, a.id, "app-a"), groupOwnedBy(owners, b.id, "app-b")
	plain := groupOwnedBy(owners, b.id, "plain")
	delA, delB := groupOwnedBy(owners, a.id, "gone-a"), groupOwnedBy(owners, b.id, "gone-b")

	// A served streams group of each owner, joined through the other
	// instance; offsets committed for sA by its member, and for plain
	// consumer groups by an admin (generation -1).
	ma, mb := &member{id: "ma"}, &member{id: "mb"}
	ma.joinUntilAssigned(t, ctx, b, sA, "in")
	mb.joinUntilAssigned(t, ctx, a, sB, "in")
	commit := ma.commitRequest(sA, "in", 10, 11, 12, 13)
	if cresp, err := commit.RequestWith(ctx, b.node0()); err != nil || cresp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit of %s through %s: %+v %v", sA, b.id, cresp, err)
	}
	admOf := func(in *testInstance) *kadm.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(in.bootstrap))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return kadm.NewClient(cl)
	}
	adms := []*kadm.Client{admOf(a), admOf(b)}
	for _, g := range []string{plain, delA, delB} {
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "in", Partition: 0, At: 5, LeaderEpoch: -1})
		if err := adms[0].CommitAllOffsets(ctx, g, os); err != nil {
			t.Fatalf("commit of %s: %v", g, err)
		}
	}

	// Through each instance, in the same way: the answers must be equal,
	// and right.
	type answers struct {
		listed    map[string]string // group → state/type
		described map[string]string
		streams   map[string]string
		offsets   map[string]string
		configs   []string
	}
	ask := func(in *testInstance, adm *kadm.Client) answers {
		var ans answers
		// Keep the members in their groups meanwhile.
		for _, m := range []*member{ma, mb} {
			g, at := sA, b
			if m == mb {
				g, at = sB, a
			}
			if _, err := m.heartbeat(ctx, at, streamsHeartbeat(g, m.id, m.epoch, m.owned)); err != nil {
				t.Fatalf("heartbeat of %s: %v", m.id, err)
			}
		}
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			t.Fatalf("list groups through %s: %v", in.id, err)
		}
		ans.listed = map[string]string{}
		for g, lg := range listed {
			ans.listed[g] = fmt.Sprintf("%s/%s/%s", lg.ProtocolType, lg.State, lg.GroupType)
		}
		described, err := adm.DescribeGroups(ctx, sA, sB, plain)
		if err != nil {
			t.Fatalf("describe groups through %s: %v", in.id, err)
		}
		ans.described = map[string]string{}
		for g, dg := range described {
			ans.described[g] = fmt.Sprintf("%v/%s/%s/%d", dg.Err, dg.State, dg.ProtocolType, len(dg.Members))
		}
		sd := kmsg.NewPtrStreamsGroupDescribeRequest()
		sd.Groups = []string{sA, sB, plain}
		sresp, err := sd.RequestWith(ctx, in.node0())
		if err != nil {
			t.Fatal(err)
		}
		ans.streams = map[string]string{}
		for _, g := range sresp.Groups {
			ids := []string{}
			for _, m := range g.Members {
				ids = append(ids, m.MemberID)
			}
			ans.streams[g.Group] = fmt.Sprintf("%v/%s/%v", kerr.ErrorForCode(g.ErrorCode), g.State, ids)
		}
		ans.offsets = map[string]string{}
		for g, fr := range adm.FetchManyOffsets(ctx, sA, sB, plain) {
			at := map[int32]int64{}
			fr.Fetched.Each(func(o kadm.OffsetResponse) { at[o.Partition] = o.At })
			ans.offsets[g] = fmt.Sprintf("%v/%v", fr.Err, at)
		}
		dc := kmsg.NewPtrDescribeConfigsRequest()
		for _, g := range []string{sA, sB, plain} {
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, g, []string{"streams.num.standby.replicas"}
			dc.Resources = append(dc.Resources, r)
		}
		dresp, err := dc.RequestWith(ctx, in.node0())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range dresp.Resources {
			s := fmt.Sprintf("%s:%v", r.ResourceName, kerr.ErrorForCode(r.ErrorCode))
			for _, c := range r.Configs {
				s += fmt.Sprintf(" %s=%s(%v)", c.Name, deref(c.Value), c.Source)
			}
			ans.configs = append(ans.configs, s)
		}
		return ans
	}

	// Group configs altered in one request through a: sB (b's), sA
	// (a's) and plain (b's, the upstream's).
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, g := range []string{sB, sA, plain} {
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, g
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = "streams.num.standby.replicas", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("1")
		if g == sA {
			c.Value = kmsg.StringPtr("2")
		}
		r.Configs = append(r.Configs, c)
		alter.Resources = append(alter.Resources, r)
	}
	aresp, err := alter.RequestWith(ctx, a.node0())
	if err != nil {
		t.Fatal(err)
	}
	if len(aresp.Resources) != 3 || aresp.Resources[0].ResourceName != sB || aresp.Resources[0].ErrorCode != 0 ||
		aresp.Resources[1].ResourceName != sA || aresp.Resources[1].ErrorCode != 0 || aresp.Resources[2].ResourceName != plain {
		t.Fatalf("alter group configs through %s: %+v", a.id, aresp.Resources)
	}

	got := []answers{ask(a, adms[0]), ask(b, adms[1])}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Fatalf("answers through %s:\n%+v\nthrough %s:\n%+v", a.id, got[0], b.id, got[1])
	}
	ans := got[0]
	for _, g := range []string{sA, sB} {
		if l := ans.listed[g]; !strings.HasPrefix(l, "streams/") || !strings.HasSuffix(l, "/streams") {
			t.Errorf("%s listed as %q, want a streams group (listed: %v)", g, l, ans.listed)
		}
		// DescribeGroups v6 (advertised whatever the upstream speaks, as
		// Kafka 4.4 does): a streams group is GROUP_ID_NOT_FOUND.
		if want := "GROUP_ID_NOT_FOUND: The group id does not exist.///0"; ans.described[g] != want {
			t.Errorf("%s described as %q, want %q (not a classic group)", g, ans.described[g], want)
		}
	}
	if ans.listed[plain] != "/Empty/classic" {
		t.Errorf("%s listed as %q, want an empty consumer group", plain, ans.listed[plain])
	}
	if want := "<nil>/Empty//0"; ans.described[plain] != want {
		t.Errorf("%s described as %q, want %q", plain, ans.described[plain], want)
	}
	for g, m := range map[string]string{sA: ma.id, sB: mb.id} {
		if d := ans.streams[g]; !strings.HasPrefix(d, "<nil>/") || !strings.HasSuffix(d, "/["+m+"]") {
			t.Errorf("%s: streams describe %q, want its member %s", g, d, m)
		}
	}
	if d := ans.streams[plain]; !strings.HasPrefix(d, kerr.GroupIDNotFound.Error()) {
		t.Errorf("%s: streams describe %q, want GROUP_ID_NOT_FOUND", plain, d)
	}
	if want := "<nil>/map[0:5]"; ans.offsets[plain] != want {
		t.Errorf("%s offsets %q, want %q", plain, ans.offsets[plain], want)
	}
	if want := "<nil>/map[0:10 1:11 2:12 3:13]"; ans.offsets[sA] != want {
		t.Errorf("%s offsets %q, want %q", sA, ans.offsets[sA], want)
	}
	if len(ans.configs) != 3 ||
		ans.configs[0] != fmt.Sprintf("%s:<nil> streams.num.standby.replicas=2(%v)", sA, kmsg.ConfigSourceGroupConfig) ||
		ans.configs[1] != fmt.Sprintf("%s:<nil> streams.num.standby.replicas=1(%v)", sB, kmsg.ConfigSourceGroupConfig) {
		t.Errorf("group configs: %q, want %s's and %s's set here", ans.configs, sA, sB)
	}

	// Deleted through either instance, groups of both owners: a served
	// group with a member is not empty, a plain one goes.
	for i, del := range [][]string{{sB, delA}, {sA, delB}} {
		resp, err := adms[i].DeleteGroups(ctx, del...)
		if err != nil {
			t.Fatal(err)
		}
		if e := resp[del[0]].Err; e != kerr.NonEmptyGroup {
			t.Errorf("delete %s through %s: %v, want NON_EMPTY_GROUP", del[0], ins[i].id, e)
		}
		if e := resp[del[1]].Err; e != nil {
			t.Errorf("delete %s through %s: %v", del[1], ins[i].id, e)
		}
	}
	listed, err := adms[1].ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	left := listed.Groups()
	sort.Strings(left)
	for _, g := range left {
		if g == delA || g == delB {
			t.Errorf("%s still listed after its deletion: %v", g, left)
		}
	}

	// b's internal listener closes: a cannot ask it for its served groups.
	if err := listenerOf[b.id].Close(); err != nil {
		t.Fatal(err)
	}
	lg := kmsg.NewPtrListGroupsRequest()
	lresp, err := lg.RequestWith(ctx, a.node0())
	if err != nil {
		t.Fatal(err)
	}
	if lresp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("ListGroups through %s with %s down: %v %+v, want COORDINATOR_NOT_AVAILABLE", a.id, b.id, kerr.ErrorForCode(lresp.ErrorCode), lresp.Groups)
	}
}
