package streams

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchBytes must be what Kafka's log measures: a v2 batch of one record,
// as kmsg encodes it.
func TestBatchBytesIsKafkasBatchSize(t *testing.T) {
	for _, kv := range [][2]int{{0, 0}, {10, 100}, {127, 128}, {40000, 1 << 20}, {5, 2 << 20}} {
		rec := kmsg.Record{Key: make([]byte, kv[0]), Value: make([]byte, kv[1])}
		body := rec.AppendTo(nil)
		rec.Length = int32(len(body) - 1) // AppendTo wrote a 1-byte length 0
		body = rec.AppendTo(nil)
		b := kmsg.RecordBatch{Magic: 2, NumRecords: 1, Records: body}
		b.Length = int32(len(b.AppendTo(nil)) - 12) // the length counts from the leader epoch on
		if got, want := batchBytes(kv[0], kv[1]), len(b.AppendTo(nil)); got != want {
			t.Errorf("batchBytes(%d, %d) = %d, kmsg's batch is %d bytes", kv[0], kv[1], got, want)
		}
	}
}

// The member record's bound is exact: a process id one byte longer than
// what fits is refused, the longest that fits is accepted.
func TestMemberRecordBoundIsExact(t *testing.T) {
	req := func(processLen int) *kmsg.StreamsGroupHeartbeatRequest {
		r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		r.Group, r.MemberID = "g", "m1"
		p := strings.Repeat("p", processLen)
		r.ProcessID = &p
		return r
	}
	fits := 0
	for n := MaxRecordBytes - 200; n < MaxRecordBytes; n++ {
		if requestMemberRecordBytes(req(n)) <= MaxRecordBytes {
			fits = n
		}
	}
	if fits == 0 {
		t.Fatal("no process id length fits")
	}
	if err := checkRecordBounds(req(fits)); err != nil {
		t.Fatalf("process id of %d bytes refused: %v", fits, err)
	}
	err := checkRecordBounds(req(fits + 1))
	if err == nil || err.Code != kerr.UnknownServerError {
		t.Fatalf("process id of %d bytes: %v, want UNKNOWN_SERVER_ERROR", fits+1, err)
	}
}
