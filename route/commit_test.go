package route

import (
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCommitSplit: a commit whose validation refused some partitions is
// split into the partitions forwarded upstream and those answered locally,
// and the two together answer every partition of the request exactly once.
func TestCommitSplit(t *testing.T) {
	r := kmsg.NewPtrOffsetCommitRequest()
	for _, name := range []string{"a", "b", "empty"} {
		topic := kmsg.NewOffsetCommitRequestTopic()
		topic.Topic = name
		if name != "empty" {
			for p := int32(0); p < 3; p++ {
				part := kmsg.NewOffsetCommitRequestTopicPartition()
				part.Partition = p
				topic.Partitions = append(topic.Partitions, part)
			}
		}
		r.Topics = append(r.Topics, topic)
	}
	stale := kerr.StaleMemberEpoch
	// Request order: a-0 a-1 a-2 b-0 b-1 b-2; "empty" has none.
	errs := byTopic([]error{nil, stale, nil, stale, stale, stale}, []int{3, 3, 0})
	keep := [][]bool{{true, false, true}, {false, false, false}, {}}
	for ti := range errs {
		for pi := range errs[ti] {
			if (errs[ti][pi] == nil) != keep[ti][pi] {
				t.Fatalf("byTopic put %v at %d/%d", errs[ti][pi], ti, pi)
			}
		}
	}
	fwd := keepPartitions(r.Topics, func(t *kmsg.OffsetCommitRequestTopic) *[]kmsg.OffsetCommitRequestTopicPartition { return &t.Partitions }, keep)
	if len(fwd) != 1 || fwd[0].Topic != "a" || len(fwd[0].Partitions) != 2 || fwd[0].Partitions[0].Partition != 0 || fwd[0].Partitions[1].Partition != 2 {
		t.Fatalf("forwarded %+v, want a-0 and a-2", fwd)
	}
	if len(r.Topics[0].Partitions) != 3 {
		t.Fatal("keepPartitions changed the client's request")
	}
	refused := offsetCommitAnswer(r, func(ti, pi int) (int16, bool) {
		if keep[ti][pi] {
			return 0, false
		}
		return kafkaCode(errs[ti][pi]), true
	})
	var got []string
	for _, rt := range refused.Topics {
		for _, p := range rt.Partitions {
			got = append(got, rt.Topic+"-"+string(rune('0'+p.Partition))+":"+kerr.ErrorForCode(p.ErrorCode).(*kerr.Error).Message)
		}
		if len(rt.Partitions) == 0 {
			got = append(got, rt.Topic)
		}
	}
	want := []string{"a-1:STALE_MEMBER_EPOCH", "b-0:STALE_MEMBER_EPOCH", "b-1:STALE_MEMBER_EPOCH", "b-2:STALE_MEMBER_EPOCH", "empty"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answered locally %v, want %v", got, want)
	}
	all := offsetCommitted(r, r.Version).answerAll(errors.New("not a kafka error")).(*kmsg.OffsetCommitResponse)
	if len(all.Topics) != 3 || all.Topics[0].Partitions[0].ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("answerAll %+v", all.Topics)
	}
}
