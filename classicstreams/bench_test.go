package classicstreams

import (
	"fmt"
	"math"
	"testing"
)

// benchSubscription is a v11 SubscriptionInfo with 1,000 task offset sums
// (50 subtopologies x 20 partitions), an endpoint and two client tags.
func benchSubscription(b *testing.B) []byte {
	s := SubscriptionInfo{Version: 11, LatestSupportedVersion: 11, ProcessID: pid, UserEndPoint: "localhost:8080",
		UniqueField: 1, ClientTags: []ClientTag{{"az", "a"}, {"rack", "r1"}}}
	for g := range int32(50) {
		for p := range int32(20) {
			sum := int64(g*1000 + p)
			if p%3 == 0 {
				sum = OffsetSumRunningActive
			}
			s.TaskOffsetSums = append(s.TaskOffsetSums, TaskOffsetSum{Task: TaskID{Subtopology: g, Partition: p}, OffsetSum: sum})
		}
	}
	enc, err := s.Encode()
	if err != nil {
		b.Fatal(err)
	}
	return enc
}

func BenchmarkDecodeSubscriptionInfoV11With1000OffsetSums(b *testing.B) {
	enc := benchSubscription(b)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := DecodeSubscriptionInfo(enc)
		if err != nil || len(s.TaskOffsetSums) != 1000 {
			b.Fatal(err)
		}
	}
}

// benchAssignment is a v11 AssignmentInfo with 500 active and 500 standby
// tasks over five topics, and host maps of ten instances.
func benchAssignment() AssignmentInfo {
	a := AssignmentInfo{Version: 11, CommonlySupportedVersion: 11, NextRebalanceMs: math.MaxInt64}
	topics := []string{"orders", "payments", "app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition", "customers", "shipments"}
	for i := range int32(500) {
		a.ActiveTasks = append(a.ActiveTasks, TaskID{Subtopology: i % 5, Partition: i / 5})
		a.StandbyTasks = append(a.StandbyTasks, StandbyTask{
			Task:       TaskID{Subtopology: i % 5, Partition: 100 + i/5},
			Partitions: []TopicPartition{{Topic: topics[i%5], Partition: 100 + i/5}},
		})
	}
	for h := range 10 {
		hp := HostPartitions{HostInfo: HostInfo{Host: fmt.Sprintf("instance-%d.example", h), Port: 8080}}
		shp := hp
		for p := range int32(50) {
			hp.Partitions = append(hp.Partitions, TopicPartition{Topic: topics[p%5], Partition: int32(h)*50 + p})
			shp.Partitions = append(shp.Partitions, TopicPartition{Topic: topics[(p+1)%5], Partition: int32(h)*50 + p})
		}
		a.PartitionsByHost = append(a.PartitionsByHost, hp)
		a.StandbyPartitionsByHost = append(a.StandbyPartitionsByHost, shp)
	}
	return a
}

func BenchmarkEncodeAssignmentInfo500Active500Standby(b *testing.B) {
	a := benchAssignment()
	enc, err := a.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

// The same with a reused buffer: the encoder itself allocates nothing.
func BenchmarkAppendAssignmentInfo500Active500Standby(b *testing.B) {
	a := benchAssignment()
	buf, err := a.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = a.AppendTo(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// Baseline in the same run: copying the encoded bytes once (the floor of
// any encoder producing a fresh slice).
func BenchmarkBaselineCopyAssignmentInfoBytes(b *testing.B) {
	a := benchAssignment()
	enc, _ := a.Encode()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		out := make([]byte, len(enc))
		copy(out, enc)
		if len(out) != len(enc) {
			b.Fatal()
		}
	}
}

// Baseline in the same run for the decoder: copying its input once.
func BenchmarkBaselineCopySubscriptionInfoBytes(b *testing.B) {
	enc := benchSubscription(b)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		out := make([]byte, len(enc))
		copy(out, enc)
		if len(out) != len(enc) {
			b.Fatal()
		}
	}
}
