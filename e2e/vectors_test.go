//go:build e2e

package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	cs "github.com/streamshift/streamshift/classicstreams"
)

// javaDecode feeds "KIND HEX" lines to the real Kafka Streams decoders of
// one Kafka version (e2e/vectors/decode.sh, which builds the tool with
// Maven on first use) and returns one JSON description per line.
func javaDecode(t *testing.T, kafka string, kinds []string, payloads [][]byte) []json.RawMessage {
	t.Helper()
	var in bytes.Buffer
	for i := range kinds {
		fmt.Fprintf(&in, "%s %s\n", kinds[i], hex.EncodeToString(payloads[i]))
	}
	script, err := filepath.Abs("vectors/decode.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, kafka)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", script, kafka, err, stderr.String())
	}
	var res []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		res = append(res, json.RawMessage(bytes.Clone(sc.Bytes())))
	}
	if len(res) != len(kinds) {
		t.Fatalf("java answered %d lines for %d inputs:\n%s\n%s", len(res), len(kinds), out, stderr.String())
	}
	return res
}

func javaError(raw json.RawMessage) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Error
}

var pid = cs.ProcessID{0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55}

func tp(topic string, p int32) cs.TopicPartition {
	return cs.TopicPartition{Topic: topic, Partition: p}
}

// assignmentAt fills every field version v carries.
func assignmentAt(v int32) cs.AssignmentInfo {
	a := cs.AssignmentInfo{
		Version: v, CommonlySupportedVersion: cs.LatestSupportedVersion, NextRebalanceMs: math.MaxInt64,
		ActiveTasks: []cs.TaskID{{Subtopology: 1}, {}, {Partition: 1}},
		StandbyTasks: []cs.StandbyTask{
			{Task: cs.TaskID{Subtopology: 1, Partition: 1}, Partitions: []cs.TopicPartition{tp("rep", 1)}},
			{Task: cs.TaskID{Partition: 2}, Partitions: []cs.TopicPartition{tp("input", 2), tp("other", 2)}},
		},
	}
	if v < 3 {
		a.CommonlySupportedVersion = cs.UnknownVersion
	}
	if v >= 2 {
		a.PartitionsByHost = []cs.HostPartitions{
			{HostInfo: cs.HostInfo{Host: "localhost", Port: 8080}, Partitions: []cs.TopicPartition{tp("rep", 0), tp("input", 0), tp("input", 1)}},
			{HostInfo: cs.HostInfo{Host: "idle", Port: 1}},
		}
	}
	if v >= 4 {
		a.ErrCode = cs.AssignorErrorAssignment
	}
	if v >= 6 {
		a.StandbyPartitionsByHost = []cs.HostPartitions{
			{HostInfo: cs.HostInfo{Host: "localhost", Port: 8080}, Partitions: []cs.TopicPartition{tp("rep", 1), tp("extra", 4)}},
		}
	}
	if v >= 7 {
		a.NextRebalanceMs = 1_700_000_000_000
	}
	if v >= 10 {
		a.ActiveTasks = append(a.ActiveTasks, cs.TaskID{Subtopology: 4, Partition: 2, NamedTopology: "nt😀"})
	}
	return a
}

func subscriptionAt(v int32) cs.SubscriptionInfo {
	s := cs.SubscriptionInfo{Version: v, LatestSupportedVersion: cs.LatestSupportedVersion, ProcessID: pid}
	if v < 3 {
		s.LatestSupportedVersion = cs.UnknownVersion
	}
	sums := []cs.TaskOffsetSum{
		{Task: cs.TaskID{}, OffsetSum: cs.OffsetSumRunningActive},
		{Task: cs.TaskID{Partition: 1}, OffsetSum: 100},
		{Task: cs.TaskID{Subtopology: 3, Partition: 9}, OffsetSum: math.MaxInt64},
	}
	if v < 7 {
		s.PrevTasks, s.StandbyTasks = cs.SplitOffsetSums(sums)
	} else {
		s.TaskOffsetSums = sums
	}
	if v >= 2 {
		s.UserEndPoint = "localhost:8080"
	}
	if v >= 8 {
		s.UniqueField = -7
	}
	if v >= 9 {
		s.ErrorCode = cs.AssignorErrorShutdownRequested
	}
	if v >= 10 {
		s.TaskOffsetSums = append(s.TaskOffsetSums, cs.TaskOffsetSum{Task: cs.TaskID{Subtopology: 2, Partition: 5, NamedTopology: "nt"}, OffsetSum: 3})
	}
	if v >= 11 {
		s.ClientTags = []cs.ClientTag{{Key: "az", Value: "a"}, {Key: "zone", Value: "ü"}}
	}
	return s
}

// TestJavaDecodesGoEncoded: AssignmentInfo of every version (plain, and as
// the translation helpers build it for the migration), SubscriptionInfo of
// every version and the consumer protocol envelopes v0-v3, all encoded by
// classicstreams, decode in the real Kafka Streams classes of 4.4.0, 3.9.2,
// 3.6.2 and 2.8.2 to exactly what Go meant; each jar is given the versions it
// can read (2.8: SubscriptionInfo/AssignmentInfo v1-v9, consumer protocol
// v0-v1).
func TestJavaDecodesGoEncoded(t *testing.T) {
	t.Parallel()
	var assignments []cs.AssignmentInfo
	for v := int32(1); v <= cs.LatestSupportedVersion; v++ {
		assignments = append(assignments, assignmentAt(v))
	}
	topo, err := cs.NewTaskTopology(map[int32][]string{0: {"input"}, 1: {"app-rep-repartition"}})
	if err != nil {
		t.Fatal(err)
	}
	counts := func(string) (int32, bool) { return 4, true }
	parts, active, err := cs.AlignActiveTasks([]cs.TaskID{{Partition: 1}, {Subtopology: 1}, {}}, topo, counts)
	if err != nil {
		t.Fatal(err)
	}
	standby, err := cs.StandbyAssignment([]cs.TaskID{{Subtopology: 1, Partition: 3}, {Partition: 2}}, topo, counts)
	if err != nil {
		t.Fatal(err)
	}
	hostActive, hostStandby := cs.HostMaps([]cs.EndpointPartitions{
		{Endpoint: cs.HostInfo{Host: "localhost", Port: 8080}, Active: parts, Standby: []cs.TopicPartition{tp("app-rep-repartition", 3), tp("input", 2)}},
		{Endpoint: cs.HostInfo{Host: "other", Port: 8081}, Active: []cs.TopicPartition{tp("input", 3)}},
	}, []cs.HostInfo{{Host: "idle", Port: 1}})
	for v := int32(4); v <= cs.LatestSupportedVersion; v++ {
		r := cs.ReplyVersion(v, cs.LatestSupportedVersion)
		a := cs.AssignmentInfo{Version: r.Version, CommonlySupportedVersion: r.CommonlySupportedVersion,
			ActiveTasks: active, StandbyTasks: standby, PartitionsByHost: hostActive, NextRebalanceMs: math.MaxInt64}
		if v >= 6 {
			a.StandbyPartitionsByHost = hostStandby
		}
		if v >= 7 {
			a.NextRebalanceMs = 0
		}
		assignments = append(assignments, a)
		e, err := cs.ErrorAssignment(r, cs.AssignorErrorShutdownRequested)
		if err != nil {
			t.Fatal(err)
		}
		assignments = append(assignments, e)
	}
	assignments = append(assignments, cs.FutureMemberAssignment())
	// The whole SyncGroup reply as the migration builds it.
	for _, v := range []int32{2, 5, 11, 12} {
		_, _, info, err := cs.BuildSyncAssignment(cs.SyncAssignment{
			ConsumerProtocolVersion: 3, SubscriptionVersion: v, LatestSupportedVersion: max(v, 11),
			Active: []cs.TaskID{{}, {Subtopology: 1, Partition: 2}}, Standby: []cs.TaskID{{Partition: 3}},
			PartitionsByHost: hostActive, StandbyPartitionsByHost: hostStandby, NextRebalanceMs: cs.NoFollowupRebalance,
		}, topo, counts)
		if err != nil {
			t.Fatal(err)
		}
		if v < 6 {
			info.StandbyPartitionsByHost = nil // not on the wire before v6
		}
		if v < 2 {
			info.PartitionsByHost = nil
		}
		assignments = append(assignments, *info)
	}

	var subscriptions []cs.SubscriptionInfo
	for v := int32(1); v <= cs.LatestSupportedVersion; v++ {
		subscriptions = append(subscriptions, subscriptionAt(v))
	}

	var kinds []string
	var payloads [][]byte
	var versions []int32
	add := func(kind string, version int32, b []byte, err error) {
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		kinds, payloads, versions = append(kinds, kind), append(payloads, b), append(versions, version)
	}
	for _, a := range assignments {
		b, err := a.Encode()
		add("assignment", a.Version, b, err)
	}
	for _, s := range subscriptions {
		b, err := s.Encode()
		add("subscription", s.Version, b, err)
	}
	rack := "rack-a"
	subBytes, _ := subscriptions[len(subscriptions)-1].Encode()
	asgBytes, _ := assignments[len(assignments)-1].Encode()
	var consumerSubs []cs.ConsumerSubscription
	var consumerAsgs []cs.ConsumerAssignment
	for v := int16(0); v <= cs.MaxConsumerProtocolVersion; v++ {
		s := cs.ConsumerSubscription{Version: v, Topics: []string{"app-rep-repartition", "input"}, UserData: subBytes, GenerationID: -1}
		if v >= 1 {
			s.OwnedPartitions = parts
		}
		if v >= 2 {
			s.GenerationID = 7
		}
		if v >= 3 {
			s.RackID = &rack
		}
		consumerSubs = append(consumerSubs, s)
		add("consumer-subscription", int32(v), s.Encode(), nil)
		a := cs.ConsumerAssignment{Version: v, AssignedPartitions: parts, UserData: asgBytes}
		consumerAsgs = append(consumerAsgs, a)
		add("consumer-assignment", int32(v), a.Encode(), nil)
	}

	// What each jar can read: its LATEST_SUPPORTED_VERSION of the Streams
	// metadata and the highest ConsumerProtocol version of its kafka-clients.
	for _, jar := range []struct {
		kafka             string
		streams, consumer int32
	}{{"4.4.0", 11, 3}, {"3.9.2", 11, 3}, {"3.6.2", 11, 3}, {"2.8.2", 9, 1}} {
		t.Run("kafka-streams-"+jar.kafka, func(t *testing.T) {
			readable := func(i int) bool {
				if strings.HasPrefix(kinds[i], "consumer-") {
					return versions[i] <= jar.consumer
				}
				return versions[i] <= jar.streams
			}
			var jk []string
			var jp [][]byte
			for i := range kinds {
				if readable(i) {
					jk, jp = append(jk, kinds[i]), append(jp, payloads[i])
				}
			}
			res := javaDecode(t, jar.kafka, jk, jp)
			at := -1 // the payload being checked, in the order they were added
			next := func(what string, into any) bool {
				if at++; !readable(at) {
					return false
				}
				raw := res[0]
				res = res[1:]
				if e := javaError(raw); e != "" {
					t.Errorf("%s: the Java decoder failed: %s", what, e)
					return false
				}
				if err := json.Unmarshal(raw, into); err != nil {
					t.Fatalf("%s: %v in %s", what, err, raw)
				}
				return true
			}
			for _, want := range assignments {
				var got cs.AssignmentInfo
				what := fmt.Sprintf("AssignmentInfo v%d errCode %d", want.Version, want.ErrCode)
				if next(what, &got) && !reflect.DeepEqual(got.Canonical(), want.Canonical()) {
					t.Errorf("%s: Java sees\n %+v\nwant %+v", what, got.Canonical(), want.Canonical())
				}
			}
			for _, want := range subscriptions {
				got := cs.SubscriptionInfo{LatestSupportedVersion: cs.UnknownVersion}
				what := fmt.Sprintf("SubscriptionInfo v%d", want.Version)
				if next(what, &got) && !reflect.DeepEqual(got.Canonical(), want.Canonical()) {
					t.Errorf("%s: Java sees\n %+v\nwant %+v", what, got.Canonical(), want.Canonical())
				}
			}
			for i := range consumerSubs {
				gotS := cs.ConsumerSubscription{GenerationID: -1}
				what := fmt.Sprintf("ConsumerProtocolSubscription v%d", i)
				if next(what, &gotS) && !reflect.DeepEqual(gotS.Canonical(), consumerSubs[i].Canonical()) {
					t.Errorf("%s: Java sees\n %+v\nwant %+v", what, gotS, consumerSubs[i])
				}
				var gotA cs.ConsumerAssignment
				what = fmt.Sprintf("ConsumerProtocolAssignment v%d", i)
				if next(what, &gotA) && !reflect.DeepEqual(gotA.Canonical(), consumerAsgs[i].Canonical()) {
					t.Errorf("%s: Java sees\n %+v\nwant %+v", what, gotA, consumerAsgs[i])
				}
			}
		})
	}
}
