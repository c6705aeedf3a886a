package classicstreams

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

var pid = ProcessID{0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// subscriptionAt builds a SubscriptionInfo carrying everything version v can.
func subscriptionAt(v int32) SubscriptionInfo {
	s := SubscriptionInfo{Version: v, LatestSupportedVersion: LatestSupportedVersion, ProcessID: pid}
	if v < 3 {
		s.LatestSupportedVersion = UnknownVersion
	}
	sums := []TaskOffsetSum{
		{Task: TaskID{Subtopology: 0, Partition: 0}, OffsetSum: OffsetSumRunningActive},
		{Task: TaskID{Subtopology: 0, Partition: 1}, OffsetSum: 100},
		{Task: TaskID{Subtopology: 3, Partition: 9}, OffsetSum: math.MaxInt64},
	}
	if v < minOffsetSumVersion {
		s.PrevTasks, s.StandbyTasks = SplitOffsetSums(sums)
	} else {
		s.TaskOffsetSums = sums
	}
	if v >= 2 {
		s.UserEndPoint = "localhost:8080"
	}
	if v >= minUniqueFieldVersion {
		s.UniqueField = -7
	}
	if v >= minErrorCodeVersion {
		s.ErrorCode = AssignorErrorShutdownRequested
	}
	if v >= minClientTagsVersion {
		s.ClientTags = []ClientTag{{Key: "az", Value: "a"}, {Key: "zone", Value: "ü"}}
	}
	return s
}

func assignmentAt(v int32) AssignmentInfo {
	a := AssignmentInfo{
		Version:                  v,
		CommonlySupportedVersion: LatestSupportedVersion,
		ActiveTasks:              []TaskID{{1, 0, ""}, {0, 0, ""}, {0, 1, ""}},
		StandbyTasks: []StandbyTask{
			{Task: TaskID{Subtopology: 1, Partition: 1}, Partitions: []TopicPartition{{"rep", 1}}},
			{Task: TaskID{Subtopology: 0, Partition: 2}, Partitions: []TopicPartition{{"input", 2}, {"other", 2}}},
		},
		NextRebalanceMs: math.MaxInt64,
	}
	if v < minCommonlyVersion {
		a.CommonlySupportedVersion = UnknownVersion
	}
	if v >= minHostMapVersion {
		a.PartitionsByHost = []HostPartitions{
			{HostInfo: HostInfo{"localhost", 8080}, Partitions: []TopicPartition{{"rep", 0}, {"input", 0}, {"input", 1}}},
			{HostInfo: HostInfo{"idle", 1}},
		}
	}
	if v >= minErrCodeVersion {
		a.ErrCode = AssignorErrorAssignment
	}
	if v >= minStandbyHostMapVersion {
		a.StandbyPartitionsByHost = []HostPartitions{
			{HostInfo: HostInfo{"localhost", 8080}, Partitions: []TopicPartition{{"rep", 1}, {"extra", 4}}},
		}
	}
	if v >= minNextRebalanceVersion {
		a.NextRebalanceMs = 1_700_000_000_000
	}
	if v >= minNamedTopologyVersion {
		a.ActiveTasks = append(a.ActiveTasks, TaskID{Subtopology: 4, Partition: 2, NamedTopology: "nt😀"})
	}
	return a
}

func TestSubscriptionInfoRoundTripEveryVersion(t *testing.T) {
	for v := int32(1); v <= LatestSupportedVersion; v++ {
		in := subscriptionAt(v)
		b, err := in.Encode()
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		out, err := DecodeSubscriptionInfo(b)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if !reflect.DeepEqual(*out, in) {
			t.Errorf("v%d:\n got %+v\nwant %+v", v, *out, in)
		}
		// AppendTo appends and gives the same bytes.
		app, err := in.AppendTo([]byte{9})
		if err != nil || !bytes.Equal(app[1:], b) || app[0] != 9 {
			t.Errorf("v%d: AppendTo differs from Encode (%v)", v, err)
		}
		// The unified offset-sum view is the same at every version.
		got := out.OffsetSums()
		want := in.OffsetSums()
		if v < minOffsetSumVersion {
			// -3 for standbys, as Java synthesizes
			for _, o := range got {
				if o.OffsetSum != OffsetSumRunningActive && o.OffsetSum != OffsetSumUnknown {
					t.Errorf("v%d: synthesized sum %d", v, o.OffsetSum)
				}
			}
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("v%d: offset sums %v, want %v", v, got, want)
		}
	}
}

func TestAssignmentInfoRoundTripEveryVersion(t *testing.T) {
	for v := int32(1); v <= LatestSupportedVersion; v++ {
		in := assignmentAt(v)
		b, err := in.Encode()
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		out, err := DecodeAssignmentInfo(b)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		out.TopicDictionary = nil
		if !reflect.DeepEqual(*out, in) {
			t.Errorf("v%d:\n got %+v\nwant %+v", v, *out, in)
		}
	}
}

func TestSubscriptionInfoKnownBytes(t *testing.T) {
	// Research vector V3: v9, shutdown requested, nothing else.
	want := mustHex(t, "00000009 00000009 11111111222233334444555555555555 00000000 00000000 02 00000004")
	s := SubscriptionInfo{Version: 9, LatestSupportedVersion: 9, ProcessID: pid, UniqueField: 2, ErrorCode: 4}
	got, err := s.Encode()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %x, %v\nwant %x", got, err, want)
	}
	if !s.ShutdownRequested() {
		t.Error("ShutdownRequested false for errorCode 4")
	}
}

func TestSubscriptionInfoFutureHeaderOnly(t *testing.T) {
	for _, b := range [][]byte{
		mustHex(t, "0000000c 0000000c"),
		mustHex(t, "0000000c 0000000d ffffffff 01"),
		mustHex(t, "7fffffff 00000000"),
	} {
		s, err := DecodeSubscriptionInfo(b)
		if err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if !s.Future || s.Version <= LatestSupportedVersion {
			t.Fatalf("%x: %+v", b, s)
		}
		if _, err := s.Encode(); err == nil {
			t.Error("encoding a future version must fail")
		}
	}
	if _, err := DecodeSubscriptionInfo(mustHex(t, "0000000c 0000")); !errors.Is(err, ErrTruncated) {
		t.Errorf("future header cut short: %v", err)
	}
}

func TestSubscriptionInfoNamedTopology(t *testing.T) {
	s := subscriptionAt(10)
	s.TaskOffsetSums = append(s.TaskOffsetSums, TaskOffsetSum{Task: TaskID{Subtopology: 1, Partition: 2, NamedTopology: "nt"}, OffsetSum: 5})
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeSubscriptionInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	if named := out.NamedTopologyTasks(); len(named) != 1 || named[0].String() != "nt__1_2" {
		t.Fatalf("named tasks %v", named)
	}
	s.Version = 9
	if _, err := s.Encode(); err == nil {
		t.Error("named topology at v9 must not encode")
	}
}

func TestEncodeRejects(t *testing.T) {
	for name, s := range map[string]SubscriptionInfo{
		"version 0":        {Version: 0},
		"version 12":       {Version: 12, LatestSupportedVersion: 12},
		"latest < version": {Version: 8, LatestSupportedVersion: 7},
		"sums at v6":       {Version: 6, LatestSupportedVersion: 11, TaskOffsetSums: []TaskOffsetSum{{}}},
		"prev at v7":       {Version: 7, LatestSupportedVersion: 11, PrevTasks: []TaskID{{}}},
	} {
		if _, err := s.Encode(); err == nil {
			t.Errorf("SubscriptionInfo %s: encoded", name)
		}
	}
	for name, a := range map[string]AssignmentInfo{
		"version 0":     {Version: 0},
		"version 12":    {Version: 12},
		"errCode at v3": {Version: 3, ErrCode: 4},
		"named at v9":   {Version: 9, ActiveTasks: []TaskID{{NamedTopology: "x"}}},
		"long host":     {Version: 2, PartitionsByHost: []HostPartitions{{HostInfo: HostInfo{Host: strings.Repeat("h", 70000)}}}},
	} {
		if _, err := a.Encode(); err == nil {
			t.Errorf("AssignmentInfo %s: encoded", name)
		}
	}
}

// Kafka Streams writes strings with DataOutput.writeUTF (modified UTF-8):
// NUL as c0 80 and a supplementary character as two three-byte surrogates.
func TestAssignmentInfoModifiedUTF8(t *testing.T) {
	a := AssignmentInfo{Version: 2, CommonlySupportedVersion: UnknownVersion, NextRebalanceMs: math.MaxInt64,
		PartitionsByHost: []HostPartitions{{HostInfo: HostInfo{Host: "a\x00😀", Port: 1}}}}
	b, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := mustHex(t, "00000002 00000000 00000000 00000001 0009 61c080eda0bdedb880 00000001 00000000")
	if !bytes.Equal(b, want) {
		t.Fatalf("got  %x\nwant %x", b, want)
	}
	out, err := DecodeAssignmentInfo(b)
	if err != nil || out.PartitionsByHost[0].Host != "a\x00😀" {
		t.Fatalf("decoded %+v, %v", out, err)
	}
	// A byte Java's readUTF rejects.
	bad := mustHex(t, "00000002 00000000 00000000 00000001 0001 ff 00000001 00000000")
	if _, err := DecodeAssignmentInfo(bad); !errors.Is(err, ErrBadString) {
		t.Fatalf("invalid modified UTF-8: %v", err)
	}
}

func TestAssignmentInfoNamedTopologyUTF16(t *testing.T) {
	// Research vector V17: task nt 0_0 at v11 is 0_0 + 2 chars UTF-16BE.
	a := AssignmentInfo{Version: 11, CommonlySupportedVersion: 11, NextRebalanceMs: math.MaxInt64,
		ActiveTasks: []TaskID{{Subtopology: 0, Partition: 0, NamedTopology: "nt"}}}
	b, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, mustHex(t, "00000001 00000000 00000000 00000002 006e0074")) {
		t.Fatalf("named task bytes missing in %x", b)
	}
}

func TestAssignmentInfoUnknownTopicIndex(t *testing.T) {
	// v5: empty dictionary, one host whose partition names index 3.
	b := mustHex(t, "00000005 00000005 00000000 00000000 00000000 00000001 0001 68 00000001 00000001 00000003 00000000 00000000")
	_, err := DecodeAssignmentInfo(b)
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrUnknownTopicIndex) || de.Offset != 35 {
		t.Fatalf("got %v", err)
	}
}

func TestConsumerProtocolKnownBytes(t *testing.T) {
	// Research vectors V9b and V9c.
	v1 := mustHex(t, "0001 00000001 000174 00000004 deadbeef 00000001 000174 00000001 00000000")
	s, err := DecodeConsumerSubscription(v1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || len(s.Topics) != 1 || !bytes.Equal(s.UserData, []byte{0xde, 0xad, 0xbe, 0xef}) ||
		len(s.OwnedPartitions) != 1 || s.OwnedPartitions[0] != (TopicPartition{"t", 0}) || s.GenerationID != -1 || s.UserDataOffset != 13 {
		t.Fatalf("got %+v", s)
	}
	if !bytes.Equal(s.Encode(), v1) {
		t.Fatalf("re-encode %x", s.Encode())
	}
	v0 := mustHex(t, "0000 00000001 000174 ffffffff")
	s, err = DecodeConsumerSubscription(v0)
	if err != nil || s.UserData != nil {
		t.Fatalf("v0 null user data: %+v %v", s, err)
	}
	if !bytes.Equal(s.Encode(), v0) {
		t.Fatalf("re-encode %x", s.Encode())
	}
}

// A version above 3 is read with the v3 layout, and extra bytes are ignored.
func TestConsumerProtocolFutureVersion(t *testing.T) {
	b := mustHex(t, "0007 00000001 000174 ffffffff 00000000 00000009 0001 72 cafe")
	s, err := DecodeConsumerSubscription(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 7 || s.GenerationID != 9 || s.RackID == nil || *s.RackID != "r" {
		t.Fatalf("got %+v", s)
	}
	if k := s.Kmsg(); k.Version != 3 {
		t.Fatalf("kmsg version %d", k.Version)
	}
	a, err := DecodeConsumerAssignment(mustHex(t, "0009 00000000 00000000 ffff"))
	if err != nil || a.Version != 9 || a.UserData == nil || len(a.UserData) != 0 {
		t.Fatalf("assignment %+v %v", a, err)
	}
}
