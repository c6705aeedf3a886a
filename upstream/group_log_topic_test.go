package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestGroupLogTopicWithoutCreate: a principal that may not CREATE the log
// topic opens a topic the operator created (least privilege: the start
// describes before it creates), and a start that finds no topic says what
// is missing.
func TestGroupLogTopicWithoutCreate(t *testing.T) {
	const topic = "__streamshift_groups"
	var grants []kfake.ACL
	for _, a := range RequiredACLs(ACLNeeds{DurableLog: true, LogTopic: topic, InstanceGroup: "__streamshift_cluster_c1"}) {
		if a.Operation != kmsg.ACLOperationCreate {
			grants = append(grants, kfake.ACL{Resource: a.Resource, Name: a.Name, Pattern: a.Pattern, Operation: a.Operation, Allow: true})
		}
	}
	for _, tc := range []struct {
		name    string
		seeded  bool
		wantErr string
	}{
		{name: "created by the operator", seeded: true},
		{name: "missing", wantErr: "create group log topic " + topic + ": TOPIC_AUTHORIZATION_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []kfake.Opt{kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(),
				kfake.Superuser("SCRAM-SHA-256", "admin", "admin"), kfake.User("SCRAM-SHA-512", "streamshift", "pw", grants...)}
			if tc.seeded {
				opts = append(opts, kfake.SeedTopics(3, topic))
			}
			c, err := kfake.NewCluster(opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = OpenSharedGroupLog(ctx, GroupLogOptions{Seeds: c.ListenAddrs(), Topic: topic, Partitions: 3,
				Opts: []kgo.Opt{kgo.SASL(scram.Auth{User: "streamshift", Pass: "pw"}.AsSha512Mechanism())}})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("open the log topic the operator created, without CREATE: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("open a missing log topic without CREATE: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestGroupLogTopicPartitionCount: an existing log topic of another
// partition count stops the start, naming the count to set (a group's
// partition depends on it).
func TestGroupLogTopicPartitionCount(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "__streamshift_groups"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = OpenSharedGroupLog(ctx, GroupLogOptions{Seeds: c.ListenAddrs(), Partitions: 2})
	if want := "has 3 partitions, coordinator.log-partitions is 2"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("open a 3-partition log topic with 2: %v, want %q", err, want)
	}
}
