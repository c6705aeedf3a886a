package upstream

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// What streamshift's own principal (the control plane's,
// control-plane.sasl.*) needs on a cluster with an authorizer, by feature.
// Every row is checked against Kafka 3.9's KafkaApis and ControllerApis
// (the first authorization each request meets), and each is granted alone,
// as written, by the e2e TestACLsExact. Kafka's implied operations keep the
// list short: READ and WRITE imply DESCRIBE on the same resource (so the
// FindCoordinator, DescribeGroups, Metadata and ListOffsets that need
// DESCRIBE ask nothing more), and CREATE on the CLUSTER would imply CREATE
// on every topic (not needed: the rows are per topic).
//
// The apps' own principals need nothing beyond what Kafka Streams needs on
// Kafka itself: streamshift asks the broker for their authorization on
// their own connections (package route) and forwards their commits as they
// are.

// ACL features.
const (
	FeatureStreams     = "streams groups"
	FeatureTopicCreate = "internal topic creation"
	FeatureDurableLog  = "durable group log"
)

// ACL is one binding streamshift's principal needs.
type ACL struct {
	Feature   string
	Resource  kmsg.ACLResourceType
	Pattern   kmsg.ACLResourcePatternType
	Name      string
	From      string // the configuration key or application setting Name derives from
	Operation kmsg.ACLOperation
	// Why names the requests that need it; Breaks what fails without it.
	Why, Breaks string
	// UntilCreated: CREATE of a topic streamshift creates when it is
	// missing, needed no more once the topic exists (the operator may
	// create it instead).
	UntilCreated bool
}

// ACLNeeds is what decides the rows: the streams groups (application ids)
// and their source topics, which the apps decide (placeholders when not
// given), and the durable log's names, which streamshift's configuration
// decides.
type ACLNeeds struct {
	Groups       []string
	SourceTopics []string
	DurableLog   bool
	LogTopic     string // coordinator.log-topic
	// InstanceGroup is __streamshift_cluster_<coordinator.cluster-id>.
	InstanceGroup string
}

// GroupLogTransactionalID is the transactional id of the group log's
// producers before their "-<partition>" suffix: "streamshift-<log topic>".
func GroupLogTransactionalID(topic string) string { return "streamshift-" + topic }

// Placeholders of the rows whose names the apps decide.
const (
	PlaceholderGroup = "<application.id>"
	PlaceholderTopic = "<source-topic>"
)

// RequiredACLs returns the rows for n, in the order of the features.
func RequiredACLs(n ACLNeeds) []ACL {
	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	groups := n.Groups
	if len(groups) == 0 {
		groups = []string{PlaceholderGroup}
	}
	sources := n.SourceTopics
	if len(sources) == 0 {
		sources = []string{PlaceholderTopic}
	}
	var out []ACL
	for _, g := range groups {
		out = append(out, ACL{
			Feature: FeatureStreams, Resource: kmsg.ACLResourceTypeGroup, Pattern: lit, Name: g, From: "the app's application.id",
			Operation: kmsg.ACLOperationRead,
			Why: "the anchor member in the upstream classic group of the same id (JoinGroup, SyncGroup, Heartbeat, LeaveGroup: READ; " +
				"FindCoordinator: DESCRIBE, implied); the ownership claim's and the online migration's DescribeGroups (DESCRIBE, implied) and the LeaveGroup fencing taken-over classic members (READ)",
			Breaks: "no anchor: the group's offset commits get COORDINATOR_NOT_AVAILABLE and its offsets may expire upstream; " +
				"a classic → streams takeover cannot describe or fence the classic members",
		})
	}
	for _, t := range sources {
		out = append(out, ACL{
			Feature: FeatureStreams, Resource: kmsg.ACLResourceTypeTopic, Pattern: lit, Name: t, From: "the app's source topics",
			Operation: kmsg.ACLOperationDescribe,
			Why:       "the coordinator's topic metadata (Metadata lists only topics the principal may DESCRIBE): source topics' partition counts for the assignment",
			Breaks:    "the topic looks missing: members get MISSING_SOURCE_TOPICS and no tasks",
		})
	}
	// The group's internal topics (<application.id>-...): DESCRIBE for
	// every group, then CREATE for every group.
	for _, acl := range []ACL{{
		Feature: FeatureStreams, Operation: kmsg.ACLOperationDescribe,
		Why:    "metadata of the group's internal topics (repartition and changelog topics are named <application.id>-...); the status page's lag (ListOffsets)",
		Breaks: "the internal topics look missing: the group stays in MISSING_INTERNAL_TOPICS",
	}, {
		Feature: FeatureTopicCreate, Operation: kmsg.ACLOperationCreate,
		Why:    "CreateTopics of a streams group's missing internal topics, as a 4.x broker's group coordinator creates them (CREATE on the CLUSTER would also do)",
		Breaks: "a new streams group (or a new topology) whose internal topics do not exist stays in MISSING_INTERNAL_TOPICS",
	}} {
		for _, g := range groups {
			acl.Resource, acl.Pattern, acl.Name, acl.From = kmsg.ACLResourceTypeTopic, pre, g+"-", "the app's application.id"
			out = append(out, acl)
		}
	}
	if !n.DurableLog {
		return out
	}
	log := n.LogTopic
	if log == "" {
		log = "__streamshift_groups"
	}
	txn := GroupLogTransactionalID(log) + "-"
	out = append(out,
		ACL{
			Feature: FeatureDurableLog, Resource: kmsg.ACLResourceTypeTopic, Pattern: lit, Name: log, From: "coordinator.log-topic",
			Operation: kmsg.ACLOperationCreate, UntilCreated: true,
			Why:    "CreateTopics of the group log at the first start, when the topic does not exist yet; not needed once it exists (or when the operator creates it: compacted, coordinator.log-partitions partitions)",
			Breaks: "a start that finds no log topic fails: \"create group log topic: TOPIC_AUTHORIZATION_FAILED\"",
		},
		ACL{
			Feature: FeatureDurableLog, Resource: kmsg.ACLResourceTypeTopic, Pattern: lit, Name: log, From: "coordinator.log-topic",
			Operation: kmsg.ACLOperationWrite,
			Why:       "the group log's transactional producers (Produce, AddPartitionsToTxn); DESCRIBE (Metadata) implied",
			Breaks:    "no log partition is loaded: the instance serves no streams group (NOT_COORDINATOR)",
		},
		ACL{
			Feature: FeatureDurableLog, Resource: kmsg.ACLResourceTypeTopic, Pattern: lit, Name: log, From: "coordinator.log-topic",
			Operation: kmsg.ACLOperationRead,
			Why:       "reading a log partition back when this instance gains it (Fetch; ListOffsets: DESCRIBE, implied); the instance group's OffsetFetch of the log topic",
			Breaks:    "no log partition is loaded: the instance serves no streams group (NOT_COORDINATOR)",
		},
		ACL{
			Feature: FeatureDurableLog, Resource: kmsg.ACLResourceTypeTransactionalId, Pattern: pre, Name: txn, From: "streamshift-<coordinator.log-topic>-<partition>",
			Operation: kmsg.ACLOperationWrite,
			Why:       "the producer of each owned log partition (InitProducerId, AddPartitionsToTxn, Produce, EndTxn: WRITE; FindCoordinator: DESCRIBE, implied); a new owner fences the old by the same id",
			Breaks:    "no log partition is loaded: TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the instance serves no streams group",
		},
		ACL{
			Feature: FeatureDurableLog, Resource: kmsg.ACLResourceTypeGroup, Pattern: lit, Name: n.InstanceGroup, From: "__streamshift_cluster_<coordinator.cluster-id>",
			Operation: kmsg.ACLOperationRead,
			Why: "the instance group the instances share the log's partitions through (JoinGroup, SyncGroup, Heartbeat, OffsetFetch, LeaveGroup); " +
				"an instance's internal listener admits a peer's link only if its principal may READ it",
			Breaks: "no instance owns a log partition: no streams group is served; links between instances are refused",
		},
	)
	return out
}

// patternFlag is kafka-acls' --resource-pattern-type value.
func patternFlag(p kmsg.ACLResourcePatternType) string { return strings.ToLower(p.String()) }

// operationFlag is kafka-acls' --operation value (Read, Write, Create, ...).
func operationFlag(op kmsg.ACLOperation) string {
	var b strings.Builder
	for _, w := range strings.Split(strings.ToLower(op.String()), "_") {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// KafkaACLsArgs are the arguments of a kafka-acls --add for a, after the
// connection's (--bootstrap-server, --command-config).
func (a ACL) KafkaACLsArgs(principal string) []string {
	args := []string{"--add", "--allow-principal", principal}
	switch a.Resource {
	case kmsg.ACLResourceTypeTopic:
		args = append(args, "--topic", a.Name)
	case kmsg.ACLResourceTypeGroup:
		args = append(args, "--group", a.Name)
	case kmsg.ACLResourceTypeTransactionalId:
		args = append(args, "--transactional-id", a.Name)
	case kmsg.ACLResourceTypeCluster:
		args = append(args, "--cluster")
	}
	return append(args, "--resource-pattern-type", patternFlag(a.Pattern), "--operation", operationFlag(a.Operation))
}

// String is the row in one line: "READ on GROUP e2e-count (literal)".
func (a ACL) String() string {
	return fmt.Sprintf("%s on %s %s (%s)", a.Operation, a.Resource, a.Name, patternFlag(a.Pattern))
}
