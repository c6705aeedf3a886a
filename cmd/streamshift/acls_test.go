package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/internal/testlog"
	"github.com/streamshift/streamshift/upstream"
)

// TestACLsCommand: streamshift acls prints one kafka-acls command per ACL
// for the configuration run would load, with the names its keys give.
func TestACLsCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	env := []string{"STREAMSHIFT_COORDINATOR_CLUSTER_ID=prod", "STREAMSHIFT_COORDINATOR_LOG_TOPIC=__ss_log"}
	code := runACLs([]string{"--principal", "User:ss", "--upstream", "k1:9093", "--group=app1", "--source-topic", "in",
		"--command-config", "admin.properties"}, env, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	conn := "kafka-acls.sh --bootstrap-server k1:9093 --command-config admin.properties --add --allow-principal User:ss "
	for _, want := range []string{
		conn + "--group app1 --resource-pattern-type literal --operation Read\n",
		conn + "--topic in --resource-pattern-type literal --operation Describe\n",
		conn + "--topic app1- --resource-pattern-type prefixed --operation Describe\n",
		conn + "--topic app1- --resource-pattern-type prefixed --operation Create\n",
		conn + "--topic __ss_log --resource-pattern-type literal --operation Create\n",
		conn + "--topic __ss_log --resource-pattern-type literal --operation Write\n",
		conn + "--topic __ss_log --resource-pattern-type literal --operation Read\n",
		conn + "--transactional-id streamshift-__ss_log- --resource-pattern-type prefixed --operation Write\n",
		conn + "--group __streamshift_cluster_prod --resource-pattern-type literal --operation Read\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "kafka-acls.sh "); n != 9 {
		t.Errorf("%d commands, want 9", n)
	}

	out.Reset()
	if code := runACLs([]string{"--principal", "User:ss", "--upstream", "k1:9093"}, []string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=false"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if strings.Contains(out.String(), "__streamshift") || !strings.Contains(out.String(), "--group '<application.id>'") {
		t.Errorf("without the durable log: %s", out.String())
	}
	if code := runACLs([]string{"--upstream", "k1:9093"}, nil, &out, &errOut); code != 2 {
		t.Errorf("no --principal: exit %d, want 2", code)
	}
}

// TestStartACLCheckOneMissing: at start, a principal lacking one ACL of the
// durable log gets one warning naming it, what breaks, and its grant; with
// all of them, none.
func TestStartACLCheckOneMissing(t *testing.T) {
	run := func(skip bool) string {
		cfg := &config.Config{}
		*cfg = config.Default()
		cfg.Coordinator.DurableLog, cfg.Coordinator.ClusterID = true, "c1"
		var grants []kfake.ACL
		for _, a := range upstream.RequiredACLs(aclNeeds(cfg, nil, nil)) {
			if skip && a.Resource == kmsg.ACLResourceTypeTransactionalId {
				continue
			}
			grants = append(grants, kfake.ACL{Resource: a.Resource, Name: a.Name, Pattern: a.Pattern, Operation: a.Operation, Allow: true})
		}
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(),
			kfake.Superuser("SCRAM-SHA-256", "admin", "admin"), kfake.User("SCRAM-SHA-512", "ss", "pw", grants...))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cfg.Upstream = c.ListenAddrs()
		cfg.ControlPlane.SASLMechanism, cfg.ControlPlane.SASLUsername, cfg.ControlPlane.SASLPassword = "SCRAM-SHA-512", "ss", "pw"
		var logs bytes.Buffer
		checkACLs(context.Background(), cfg, newLoggerTo(config.Log{Level: "info", Format: "json"}, &logs))
		return logs.String()
	}
	logs := run(true)
	if n := strings.Count(logs, `"level":"warn"`); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs)
	}
	for _, want := range []string{`"acl":"WRITE on TRANSACTIONAL_ID streamshift-__streamshift_groups- (prefixed)"`, `"breaks":"no log partition is loaded`,
		`--allow-principal User:ss --transactional-id streamshift-__streamshift_groups- --resource-pattern-type prefixed --operation Write`} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %s in:\n%s", want, logs)
		}
	}
	if logs := run(false); strings.Contains(logs, `"level":"warn"`) {
		t.Errorf("all granted, warned:\n%s", logs)
	}
}

// TestACLsDocTable: docs/acls.md holds the table streamshift acls --format
// markdown prints for the defaults (the cluster id as a placeholder).
func TestACLsDocTable(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runACLs([]string{"--principal", "User:streamshift", "--upstream", "k:9093", "--format", "markdown"},
		[]string{"STREAMSHIFT_COORDINATOR_CLUSTER_ID=<cluster-id>"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	doc, err := os.ReadFile("../../docs/acls.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), out.String()) {
		t.Errorf("docs/acls.md lacks the table; regenerate it with STREAMSHIFT_COORDINATOR_CLUSTER_ID='<cluster-id>' streamshift acls --principal User:streamshift --upstream k:9093 --format markdown:\n%s", out.String())
	}
}

// TestGroupACLCheck: the first event of a streams group asks about its rows
// once; a missing CREATE on the topics prefixed by its id is one warning
// naming it and the group.
func TestGroupACLCheck(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("SCRAM-SHA-256", "admin", "admin"), kfake.User("SCRAM-SHA-512", "ss", "pw",
			kfake.ACL{Resource: kmsg.ACLResourceTypeGroup, Name: "app", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationRead, Allow: true},
			kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "app-", Pattern: kmsg.ACLResourcePatternTypePrefixed, Operation: kmsg.ACLOperationDescribe, Allow: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := &config.Config{}
	*cfg = config.Default()
	cfg.Upstream = c.ListenAddrs()
	cfg.ControlPlane.SASLMechanism, cfg.ControlPlane.SASLUsername, cfg.ControlPlane.SASLPassword = "SCRAM-SHA-512", "ss", "pw"
	var logs testlog.Buffer
	g := newGroupACLCheck(cfg, newLoggerTo(config.Log{Level: "info", Format: "json"}, &logs))
	g.check("app")
	out := logs.String()
	if n := strings.Count(out, `"level":"warn"`); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, out)
	}
	for _, want := range []string{`"group":"app"`, `"acl":"CREATE on TOPIC app- (prefixed)"`, `--topic app- --resource-pattern-type prefixed --operation Create`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
	// Once per group: a second event starts no check.
	g.GroupEvent(coordinator.GroupEvent{Group: "app"})
	g.mu.Lock()
	n := len(g.seen)
	g.mu.Unlock()
	g.GroupEvent(coordinator.GroupEvent{Group: "app"})
	g.mu.Lock()
	again := len(g.seen)
	g.mu.Unlock()
	if n != 1 || again != 1 {
		t.Errorf("groups checked: %d after the first event, %d after the second; want 1", n, again)
	}
}
