package upstream

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// aclTestNeeds are the rows of a streamshift with the durable log serving
// group "app" reading topic "in".
var aclTestNeeds = ACLNeeds{Groups: []string{"app"}, SourceTopics: []string{"in"}, DurableLog: true,
	LogTopic: "__streamshift_groups", InstanceGroup: "__streamshift_cluster_c1"}

// checkOnKfake grants user "streamshift" the rows but skip on a kfake
// cluster with ACLs on and runs the check as that user.
func checkOnKfake(t *testing.T, skip int) []ACLCheck {
	t.Helper()
	return checkOnKfakeSeeded(t, skip, "in", "__streamshift_groups")
}

// checkOnKfakeSeeded is checkOnKfake with topics seeded.
func checkOnKfakeSeeded(t *testing.T, skip int, topics ...string) []ACLCheck {
	t.Helper()
	var grants []kfake.ACL
	for i, a := range RequiredACLs(aclTestNeeds) {
		if i != skip {
			grants = append(grants, kfake.ACL{Resource: a.Resource, Name: a.Name, Pattern: a.Pattern, Operation: a.Operation, Allow: true})
		}
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("SCRAM-SHA-256", "admin", "admin"), kfake.User("SCRAM-SHA-512", "streamshift", "pw", grants...),
		kfake.SeedTopics(1, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := CheckACLs(ctx, []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.SASL(scram.Auth{User: "streamshift", Pass: "pw"}.AsSha512Mechanism())}, RequiredACLs(aclTestNeeds))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCheckACLsAllGranted: a principal granted exactly the rows has each
// of them, as the broker answers the probes.
func TestCheckACLsAllGranted(t *testing.T) {
	for _, r := range checkOnKfake(t, -1) {
		if r.State != ACLAllowed {
			t.Errorf("%s: state %d (%v), want allowed", r.ACL, r.State, r.Err)
		}
	}
}

// TestCheckACLsOneMissing: each row left out is the one row found
// missing (WRITE on the log topic is asked with the log's transactional id,
// so without that one it is unknown, not allowed). The GROUP rows are left
// to the e2e TestACLsExact: kfake answers a Heartbeat of a group it does not
// have GROUP_ID_NOT_FOUND before it looks at ACLs, where Kafka checks READ
// first.
func TestCheckACLsOneMissing(t *testing.T) {
	rows := RequiredACLs(aclTestNeeds)
	for skip, want := range rows {
		if want.Resource == kmsg.ACLResourceTypeGroup {
			continue
		}
		t.Run(want.String(), func(t *testing.T) {
			for i, r := range checkOnKfake(t, skip) {
				switch {
				case i == skip && r.UntilCreated && r.State != ACLNotNeeded:
					t.Errorf("%s left out, its topic exists: state %d (%v), want not needed", r.ACL, r.State, r.Err)
				case i == skip && !r.UntilCreated && r.State != ACLMissing:
					t.Errorf("%s left out: state %d (%v), want missing", r.ACL, r.State, r.Err)
				case i != skip && r.State == ACLMissing:
					t.Errorf("%s granted: found missing", r.ACL)
				case i != skip && r.State == ACLUnknown && !(want.Resource == kmsg.ACLResourceTypeTransactionalId && r.Operation == kmsg.ACLOperationWrite):
					t.Errorf("%s granted: unknown (%v)", r.ACL, r.Err)
				}
			}
		})
	}
}

// TestKafkaACLsArgs: a row as kafka-acls' arguments.
func TestKafkaACLsArgs(t *testing.T) {
	rows := RequiredACLs(aclTestNeeds)
	var txn ACL
	for _, r := range rows {
		if r.Resource == kmsg.ACLResourceTypeTransactionalId {
			txn = r
		}
	}
	got := txn.KafkaACLsArgs("User:streamshift")
	want := []string{"--add", "--allow-principal", "User:streamshift", "--transactional-id", "streamshift-__streamshift_groups-",
		"--resource-pattern-type", "prefixed", "--operation", "Write"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if op := operationFlag(kmsg.ACLOperationDescribeConfigs); op != "DescribeConfigs" {
		t.Errorf("DESCRIBE_CONFIGS as %q", op)
	}
}

// TestCheckACLsCreateOfMissingLogTopic: CREATE on the group log's topic is
// missing while the topic does not exist (the next start creates it), and
// not needed once it does (TestCheckACLsOneMissing).
func TestCheckACLsCreateOfMissingLogTopic(t *testing.T) {
	rows := RequiredACLs(aclTestNeeds)
	skip := -1
	for i, r := range rows {
		if r.UntilCreated {
			skip = i
		}
	}
	if skip < 0 || rows[skip].Name != "__streamshift_groups" || rows[skip].Operation != kmsg.ACLOperationCreate {
		t.Fatalf("no CREATE row of the log topic needed until created: %v", rows)
	}
	if r := checkOnKfakeSeeded(t, skip, "in")[skip]; r.State != ACLMissing {
		t.Errorf("%s left out, no topic: state %d (%v), want missing", r.ACL, r.State, r.Err)
	}
}
