package coordinator

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// §11.28 and §11.29: offset commit and fetch validation.
func TestScenario28And29OffsetValidation(t *testing.T) {
	h := newHarness(t, nil)
	loadMemberAt100(h) // m1 at 100 owns foo 0-2 with task epochs 99, 99, 100
	commit := func(req streams.OffsetCommitRequest) streams.OffsetCommitResult {
		req.GroupID = "g"
		var got streams.OffsetCommitResult
		h.c.ValidateOffsetCommit(req, func(r streams.OffsetCommitResult) { got = r })
		return got
	}
	parts := []streams.CommitPartition{{Topic: "foo", Partition: 0}, {Topic: "foo", Partition: 2}, {Topic: "foo", Partition: 3}, {Topic: "other", Partition: 0}}
	if r := commit(streams.OffsetCommitRequest{MemberID: "m1", MemberEpoch: 100, Version: 8, Partitions: parts}); !errors.Is(r.Err, kerr.UnsupportedVersion) {
		t.Fatalf("v8: %+v", r)
	}
	if r := commit(streams.OffsetCommitRequest{MemberID: "m1", MemberEpoch: 100, Version: 9, Partitions: parts}); r.Err != nil || r.Partitions[3] != nil {
		t.Fatalf("current epoch: %+v", r)
	}
	if r := commit(streams.OffsetCommitRequest{MemberID: "m1", MemberEpoch: 101, Version: 9, Partitions: parts}); !errors.Is(r.Err, kerr.StaleMemberEpoch) {
		t.Fatalf("newer epoch: %+v", r)
	}
	r := commit(streams.OffsetCommitRequest{MemberID: "m1", MemberEpoch: 99, Version: 9, Partitions: parts})
	if r.Err != nil || r.Partitions[0] != nil {
		t.Fatalf("older epoch, task epoch 99: %+v", r)
	}
	for i := 1; i < 4; i++ {
		if !errors.Is(r.Partitions[i], kerr.StaleMemberEpoch) {
			t.Fatalf("older epoch, partition %v: %v", parts[i], r.Partitions[i])
		}
	}
	if r := commit(streams.OffsetCommitRequest{MemberID: "m9", MemberEpoch: 100, Version: 9}); !errors.Is(r.Err, kerr.UnknownMemberID) {
		t.Fatalf("unknown member: %+v", r)
	}
	if r := commit(streams.OffsetCommitRequest{MemberEpoch: -1, Transactional: true, Partitions: parts}); r.Err != nil {
		t.Fatalf("anonymous transactional commit: %+v", r)
	}
	var ferr error
	h.c.ValidateOffsetFetch("g", "m1", 99, func(err error) { ferr = err })
	if !errors.Is(ferr, kerr.StaleMemberEpoch) {
		t.Fatalf("fetch with a stale epoch: %v", ferr)
	}
	h.c.ValidateOffsetFetch("g", "m1", 100, func(err error) { ferr = err })
	h.c.ValidateOffsetFetch("g", "", -1, func(err error) {
		if err != nil {
			t.Fatalf("admin fetch: %v", err)
		}
	})
	if ferr != nil {
		t.Fatalf("fetch at the epoch: %v", ferr)
	}
	// The admin commits to an empty group.
	h.ok(hbReq("g", "m1", -1, nil))
	if r := commit(streams.OffsetCommitRequest{MemberEpoch: -1, Version: 9, Partitions: parts}); r.Err != nil {
		t.Fatalf("admin commit to an empty group: %+v", r)
	}
	var missing streams.OffsetCommitResult
	h.c.ValidateOffsetCommit(streams.OffsetCommitRequest{GroupID: "nope"}, func(r streams.OffsetCommitResult) { missing = r })
	if !errors.Is(missing.Err, kerr.GroupIDNotFound) {
		t.Fatalf("unknown group: %+v", missing)
	}
}

// A task being revoked keeps its epoch for commits at the older epoch.
func TestOffsetCommitPendingRevocation(t *testing.T) {
	h := twoMemberGroup(t, nil)
	h.ok(joinReq("g", "m3", "p3", sourceTopology("foo")))
	h.ok(hbReq("g", "m1", 3, nil)) // m1 keeps 0-1, revokes 2 at epoch 3
	var r streams.OffsetCommitResult
	h.c.ValidateOffsetCommit(streams.OffsetCommitRequest{GroupID: "g", MemberID: "m1", MemberEpoch: 2, Version: 9,
		Partitions: []streams.CommitPartition{{Topic: "foo", Partition: 2}, {Topic: "foo", Partition: 3}}}, func(x streams.OffsetCommitResult) { r = x })
	if r.Err != nil || r.Partitions[0] != nil || !errors.Is(r.Partitions[1], kerr.StaleMemberEpoch) {
		t.Fatalf("%+v", r)
	}
}
