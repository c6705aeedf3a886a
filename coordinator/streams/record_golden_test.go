package streams

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// The golden files under testdata/records/ are the durable format: bytes a
// released streamshift wrote to a group log. Per record type (a directory
// named by the type) there is the key (key.json, frozen: compaction knows a
// record by its key bytes), and per value version a full value (every field
// set, value.vN.json) and a zero value (value.vN.zero.json: what a writer
// omits or writes as null; a list of structs holds one zero struct). A key without a value is the type's tombstone.
//
// Never edit or regenerate a file of a released version: a log holding
// those bytes must keep loading. A new version adds new files.
var writeGolden = flag.Bool("write-golden", false, "write the golden record files that do not exist yet (never overwrites)")

const goldenDir = "testdata/records"

// goldenRecord is one record as a test builds it, and the files that hold
// its bytes.
type goldenRecord struct {
	version int16 // value version
	zero    bool  // the zero value (value.vN.zero.json)
	record  Record
}

func (g goldenRecord) dir() string { return filepath.Join(goldenDir, g.record.Type.String()) }

func (g goldenRecord) valueFile() string {
	name := "value.v" + strconv.Itoa(int(g.version))
	if g.zero {
		name += ".zero"
	}
	return filepath.Join(g.dir(), name+".json")
}

// goldenRecords are the records of every type and version, full and zero.
// Group "g" and member "m" throughout, so a type has one key file.
func goldenRecords() []goldenRecord {
	full := []Record{
		{Type: RecordGroupMetadata, GroupID: "g", Value: &GroupMetadataValue{
			Epoch: 5, MetadataHash: 0xfedcba9876543210, ValidatedTopologyEpoch: 2,
			LastAssignmentConfigs: []KeyValue{{Key: "num.standby.replicas", Value: "1"}},
		}},
		{Type: RecordMemberMetadata, GroupID: "g", MemberID: "m", Value: &MemberMetadataValue{
			InstanceID: "i1", RackID: "r1", ClientID: "c1", ClientHost: "/10.0.0.1",
			RebalanceTimeoutMs: 30000, TopologyEpoch: 2, ProcessID: "p1",
			UserEndpoint: &Endpoint{Host: "localhost", Port: 8080},
			ClientTags:   []KeyValue{{Key: "zone", Value: "a"}},
			Classic: &ClassicMemberMetadata{
				SessionTimeoutMs: 45000, ConsumerProtocolVersion: 3, SubscriptionVersion: 11, LatestSupportedVersion: 12,
			},
		}},
		{Type: RecordTargetAssignmentMetadata, GroupID: "g", Value: &TargetAssignmentMetadataValue{
			AssignmentEpoch: 3, AssignmentTimestamp: 1700000000000,
		}},
		{Type: RecordTargetAssignmentMember, GroupID: "g", MemberID: "m", Value: &TargetAssignmentMemberValue{
			Tasks: TaskSets{Active: Tasks{"0": {0, 1}, "1": {2}}, Standby: Tasks{"0": {2}}, Warmup: Tasks{"1": {0}}},
		}},
		{Type: RecordCurrentMemberAssignment, GroupID: "g", MemberID: "m", Value: &CurrentMemberAssignmentValue{
			MemberEpoch: 4, PreviousMemberEpoch: 3, State: MemberUnrevokedTasks,
			Assigned:          TaskSets{Active: Tasks{"0": {0, 1}, "1": {2}}, Standby: Tasks{"0": {2}}, Warmup: Tasks{"1": {0}}},
			ActiveEpochs:      map[TaskID]int32{{Subtopology: "0", Partition: 0}: 3, {Subtopology: "0", Partition: 1}: 4, {Subtopology: "1", Partition: 2}: 4, {Subtopology: "1", Partition: 3}: 2},
			PendingRevocation: TaskSets{Active: Tasks{"1": {3}}},
		}},
		{Type: RecordTopology, GroupID: "g", Value: &TopologyValue{Topology: topology.Topology{
			Epoch: 2,
			Subtopologies: []topology.Subtopology{{
				ID:                    "0",
				SourceTopics:          []string{"foo"},
				SourceTopicRegex:      []string{"bar.*"},
				RepartitionSinkTopics: []string{"app-rep"},
				RepartitionSourceTopics: []topology.TopicInfo{{
					Name: "app-rep", Partitions: 4, ReplicationFactor: 3,
					Configs: []topology.Config{{Key: "cleanup.policy", Value: "delete"}},
				}},
				StateChangelogTopics: []topology.TopicInfo{{Name: "app-store-changelog", ReplicationFactor: -1}},
				CopartitionGroups:    []topology.CopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{0}}},
			}},
		}}},
		{Type: RecordOwnership, GroupID: "g", Value: &OwnershipValue{
			Source: OwnershipTakeover, UpstreamState: "Empty", ClaimedAtMs: 1700000000000,
		}},
		{Type: RecordGroupConfig, GroupID: "g", Value: &GroupConfigValue{
			Configs: []KeyValue{{Key: "streams.num.standby.replicas", Value: "1"}},
		}},
	}
	zero := []any{
		&GroupMetadataValue{}, &MemberMetadataValue{}, &TargetAssignmentMetadataValue{}, &TargetAssignmentMemberValue{},
		&CurrentMemberAssignmentValue{},
		// A topology's lists hold structs: one of each at its zero value.
		&TopologyValue{Topology: topology.Topology{Subtopologies: []topology.Subtopology{{
			RepartitionSourceTopics: []topology.TopicInfo{{Configs: []topology.Config{{}}}},
			CopartitionGroups:       []topology.CopartitionGroup{{}},
		}}}},
		&OwnershipValue{}, &GroupConfigValue{},
	}
	var out []goldenRecord
	for i, r := range full {
		out = append(out, goldenRecord{version: 1, record: r})
		z := r
		z.Value = zero[i]
		out = append(out, goldenRecord{version: 1, zero: true, record: z})
	}
	return out
}

func readGolden(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden record: %v (go test -run TestGoldenRecords -write-golden writes a missing one)", err)
	}
	return b
}

// writeGoldenFile writes a golden file that does not exist yet; one of a
// released version is never overwritten.
func writeGoldenFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// TestGoldenRecords: today's reader reads every golden file into the record
// the test builds, and today's writer writes exactly the golden bytes of
// its version, so a renamed stored field (or a changed omitempty) fails
// here before it breaks a stored log.
func TestGoldenRecords(t *testing.T) {
	for _, g := range goldenRecords() {
		t.Run(filepath.Base(g.dir())+"/"+filepath.Base(g.valueFile()), func(t *testing.T) {
			key, value, err := MarshalRecord(g.record)
			if err != nil {
				t.Fatal(err)
			}
			keyFile := filepath.Join(g.dir(), "key.json")
			if *writeGolden {
				writeGoldenFile(t, keyFile, key)
				writeGoldenFile(t, g.valueFile(), value)
			}
			goldenKey, goldenValue := readGolden(t, keyFile), readGolden(t, g.valueFile())

			// Read: the golden bytes decode to the record.
			got, err := UnmarshalRecord(goldenKey, goldenValue)
			if err != nil {
				t.Fatalf("read %s: %v", g.valueFile(), err)
			}
			if !reflect.DeepEqual(got, g.record) {
				t.Errorf("read %s:\n got %+v\nwant %+v", g.valueFile(), deepValue(got.Value), deepValue(g.record.Value))
			}
			// The key alone is the type's tombstone.
			tomb, err := UnmarshalRecord(goldenKey, nil)
			if want := (Record{Type: g.record.Type, GroupID: g.record.GroupID, MemberID: g.record.MemberID}); err != nil || !reflect.DeepEqual(tomb, want) {
				t.Fatalf("tombstone %s: %+v, %v", keyFile, tomb, err)
			}

			// Write: the current version writes the golden bytes.
			if !bytes.Equal(key, goldenKey) {
				t.Errorf("key of %s changed:\n got %s\nwant %s (%s)", g.record.Type, key, goldenKey, keyFile)
			}
			if !bytes.Equal(value, goldenValue) {
				t.Errorf("value of %s changed:\n got %s\nwant %s (%s)", g.record.Type, value, goldenValue, g.valueFile())
			}
		})
	}
}

// TestGoldenRecordsCoverEveryVersion: every version of every record type
// has its golden files, and every golden file is read by TestGoldenRecords.
func TestGoldenRecordsCoverEveryVersion(t *testing.T) {
	tested := map[string]bool{}
	versions := map[RecordType]map[int16]bool{}
	for _, g := range goldenRecords() {
		tested[filepath.Join(g.dir(), "key.json")] = true
		tested[g.valueFile()] = true
		if versions[g.record.Type] == nil {
			versions[g.record.Type] = map[int16]bool{}
		}
		versions[g.record.Type][g.version] = true
	}
	for typ, f := range RecordValueFormats {
		for v := int16(1); v <= f.Version; v++ {
			if !versions[typ][v] {
				t.Errorf("%s: no golden record of value version %d", typ, v)
			}
		}
	}
	err := filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !tested[path] {
			t.Errorf("golden file %s is not read by TestGoldenRecords", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// todaysRecords are records today's writer produces: the golden ones, and
// the log of a group that two members join and one leaves (tombstones).
func todaysRecords(t *testing.T) []Record {
	var recs []Record
	for _, g := range goldenRecords() {
		recs = append(recs, g.record)
	}
	return append(recs, runHeartbeats(t, joinRequest("m1", "p1"), joinRequest("m2", "p2"), leaveRequest("m2"))...)
}

// TestPreviousReaderReadsTodaysRecords: the previous release's reader
// (strict: it refuses any field it does not know) reads every record written
// today, and writes it back byte for byte, so it lost nothing: streamshift
// can be rolled back over a log this release wrote.
func TestPreviousReaderReadsTodaysRecords(t *testing.T) {
	for _, r := range todaysRecords(t) {
		key, value, err := MarshalRecord(r)
		if err != nil {
			t.Fatalf("marshal %v: %v", r, err)
		}
		prev, err := previousUnmarshalRecord(key, value)
		if err != nil {
			t.Fatalf("previous reader: %s / %s: %v", key, value, err)
		}
		k, v, err := previousMarshalRecord(prev)
		if err != nil {
			t.Fatalf("previous writer: %s / %s: %v", key, value, err)
		}
		if !bytes.Equal(k, key) || !bytes.Equal(v, value) {
			t.Fatalf("previous release reads\n%s / %s\nas\n%s / %s", key, value, k, v)
		}
	}
}

// TestRecordReaderSkipsTheUnknown: what a newer streamshift may write does
// not stop this release. A value of a newer version with fields this release
// does not know reads as the fields it knows; a record of an unknown type is
// ErrUnknownRecordType, with its key for the log line, value or tombstone.
func TestRecordReaderSkipsTheUnknown(t *testing.T) {
	for _, g := range goldenRecords() {
		key := readGolden(t, filepath.Join(g.dir(), "key.json"))
		value := readGolden(t, g.valueFile())
		newer := append([]byte(`{"v":99,"futureField":{"nested":[1,2]},"FutureTasks":null,`), value[1:]...)
		got, err := UnmarshalRecord(key, newer)
		if err != nil {
			t.Fatalf("%s: %v", newer, err)
		}
		if !reflect.DeepEqual(got, g.record) {
			t.Fatalf("%s:\n got %+v\nwant %+v", newer, deepValue(got.Value), deepValue(g.record.Value))
		}
	}
	for _, value := range [][]byte{[]byte(`{"Epoch":1,"Tasks":{"x":[1]}}`), nil} {
		r, err := UnmarshalRecord([]byte(`{"v":1,"type":1999,"group":"g","member":"m","partition":3}`), value)
		if !errors.Is(err, ErrUnknownRecordType) {
			t.Fatalf("unknown type with value %s: %v", value, err)
		}
		if want := (Record{Type: 1999, GroupID: "g", MemberID: "m"}); !reflect.DeepEqual(r, want) {
			t.Fatalf("unknown type: key %+v, want %+v", r, want)
		}
	}
}
