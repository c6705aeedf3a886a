package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The start-up check asks the broker, for each row of RequiredACLs, whether
// streamshift's principal may do it, by the operation itself rather than
// DescribeAcls (which needs DESCRIBE on the CLUSTER, and sees neither
// super.users nor an authorizer other than Kafka's): a request with no side
// effect whose first check in Kafka's KafkaApis (ControllerApis for
// CreateTopics) is the one wanted, as route's client probes do.
//
//   - READ on a GROUP: a Heartbeat of a member no group has
//     (GROUP_AUTHORIZATION_FAILED before the broker looks at the group);
//   - DESCRIBE on a TOPIC: Metadata without auto-creation;
//   - CREATE on a TOPIC: CreateTopics with validate_only;
//   - READ on a TOPIC: a Fetch v12 (topics by name) of partition 0 at
//     offset 0, at most one byte, no fetch session;
//   - WRITE on a TRANSACTIONAL_ID and on a TOPIC: an AddPartitionsToTxn
//     v3 (a client's version) of a transactional id of the prefix no
//     producer uses, producer id -1: Kafka checks WRITE on the
//     transactional id, then WRITE on each topic, and only then asks the
//     transaction coordinator, which knows no such transaction.
//
// A prefixed row is asked for a name of the prefix no one uses
// (<prefix>streamshift-acl-check). A placeholder row (an application id not
// given) is not asked.

// aclCheckSuffix names what a prefixed row is asked for.
const aclCheckSuffix = "streamshift-acl-check"

// ACLState is a row's answer.
type ACLState int8

const (
	ACLAllowed ACLState = iota
	ACLMissing
	// ACLUnknown: not asked (a placeholder), or the probe failed.
	ACLUnknown
	// ACLNotNeeded: missing, but only needed to create a topic that
	// exists (ACL.UntilCreated).
	ACLNotNeeded
)

// ACLCheck is one row and what the broker answered.
type ACLCheck struct {
	ACL
	State ACLState
	Err   error // the probe's failure, with ACLUnknown
}

// CheckACLs asks the broker about every row through a client of its own
// made with opts (the control plane's seeds, TLS and SASL).
func CheckACLs(ctx context.Context, opts []kgo.Opt, acls []ACL) ([]ACLCheck, error) {
	// Fetch v12 names topics (v13 needs the id of a topic that may not
	// exist yet); AddPartitionsToTxn v4 on is between brokers.
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(int16(kmsg.Fetch), 12)
	versions.SetMaxKeyVersion(int16(kmsg.AddPartitionsToTxn), 3)
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...), kgo.MaxVersions(versions), kgo.RequestRetries(2))...)
	if err != nil {
		return nil, fmt.Errorf("ACL check client: %w", err)
	}
	defer cl.Close()
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("ACL check: upstream metadata: %w", err)
	}
	if len(md.Brokers) == 0 {
		return nil, errors.New("ACL check: no broker in the upstream's metadata")
	}
	broker := cl.Broker(int(md.Brokers[0].NodeID))
	out := make([]ACLCheck, len(acls))
	for i, a := range acls {
		out[i] = ACLCheck{ACL: a}
		if strings.Contains(a.Name, "<") {
			out[i].State, out[i].Err = ACLUnknown, errors.New("a placeholder name")
			continue
		}
		name := a.Name
		if a.Pattern == kmsg.ACLResourcePatternTypePrefixed {
			name += aclCheckSuffix
		}
		denied, err := probeACL(ctx, cl, broker, a, name)
		switch {
		case err != nil:
			out[i].State, out[i].Err = ACLUnknown, err
		case denied && a.UntilCreated:
			out[i].State = ACLMissing
			if exists, err := topicExists(ctx, broker, name); err != nil {
				out[i].State, out[i].Err = ACLUnknown, err
			} else if exists {
				out[i].State = ACLNotNeeded
			}
		case denied:
			out[i].State = ACLMissing
		}
	}
	// WRITE on the topic is asked with a transactional id streamshift may
	// use: unknown when that one is missing.
	for i, c := range out {
		if c.State != ACLMissing || c.Resource != kmsg.ACLResourceTypeTransactionalId {
			continue
		}
		for j, w := range out {
			if w.Resource == kmsg.ACLResourceTypeTopic && w.Operation == kmsg.ACLOperationWrite && w.State == ACLAllowed {
				out[j].State, out[j].Err = ACLUnknown, fmt.Errorf("asked with transactional id %s, which is refused", out[i].Name)
			}
		}
	}
	return out, nil
}

// probeACL asks one row for name.
func probeACL(ctx context.Context, cl *kgo.Client, broker *kgo.Broker, a ACL, name string) (denied bool, err error) {
	switch {
	case a.Resource == kmsg.ACLResourceTypeGroup && a.Operation == kmsg.ACLOperationRead:
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.Generation, hb.MemberID = name, -1, aclCheckSuffix
		resp, err := hb.RequestWith(ctx, broker)
		if err != nil {
			return false, err
		}
		return resp.ErrorCode == kerr.GroupAuthorizationFailed.Code, nil
	case a.Resource == kmsg.ACLResourceTypeTopic && a.Operation == kmsg.ACLOperationDescribe:
		code, err := topicMetadataCode(ctx, broker, name)
		return code == kerr.TopicAuthorizationFailed.Code, err
	case a.Resource == kmsg.ACLResourceTypeTopic && a.Operation == kmsg.ACLOperationCreate:
		ct := kmsg.NewPtrCreateTopicsRequest()
		ct.ValidateOnly, ct.TimeoutMillis = true, 10000
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, -1, -1
		ct.Topics = []kmsg.CreateTopicsRequestTopic{t}
		resp, err := ct.RequestWith(ctx, cl) // the controller's answer
		if err != nil {
			return false, err
		}
		if len(resp.Topics) != 1 {
			return false, fmt.Errorf("create %s: %d topics answered", name, len(resp.Topics))
		}
		return resp.Topics[0].ErrorCode == kerr.TopicAuthorizationFailed.Code, nil
	case a.Resource == kmsg.ACLResourceTypeTopic && a.Operation == kmsg.ACLOperationRead:
		f := kmsg.NewPtrFetchRequest()
		f.ReplicaID, f.SessionID, f.SessionEpoch = -1, 0, -1
		f.MaxWaitMillis, f.MinBytes, f.MaxBytes = 0, 0, 1
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = name
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LogStartOffset = 0, 0, 1, -1, -1
		ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
		f.Topics = []kmsg.FetchRequestTopic{ft}
		resp, err := f.RequestWith(ctx, broker)
		if err != nil {
			return false, err
		}
		if resp.ErrorCode == kerr.TopicAuthorizationFailed.Code {
			return true, nil
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == kerr.TopicAuthorizationFailed.Code {
					return true, nil
				}
			}
		}
		return false, nil
	case a.Operation == kmsg.ACLOperationWrite && (a.Resource == kmsg.ACLResourceTypeTransactionalId || a.Resource == kmsg.ACLResourceTypeTopic):
		txn, topic := name, ""
		if a.Resource == kmsg.ACLResourceTypeTopic {
			// Any transactional id of the group log's prefix, which its
			// own row grants.
			txn, topic = GroupLogTransactionalID(name)+"-"+aclCheckSuffix, name
		}
		code, err := addPartitionsProbe(ctx, broker, txn, topic)
		if err != nil {
			return false, err
		}
		if a.Resource == kmsg.ACLResourceTypeTransactionalId {
			return code == kerr.TransactionalIDAuthorizationFailed.Code, nil
		}
		if code == kerr.TransactionalIDAuthorizationFailed.Code {
			return false, fmt.Errorf("asked with transactional id %s, which is refused", txn)
		}
		return code == kerr.TopicAuthorizationFailed.Code, nil
	}
	return false, fmt.Errorf("no probe for %s on %s", a.Operation, a.Resource)
}

// addPartitionsProbe sends an AddPartitionsToTxn v3 of txn adding partition
// 0 of topic (or of a topic of no one, to ask about txn only) and returns
// the code of that partition.
func addPartitionsProbe(ctx context.Context, broker *kgo.Broker, txn, topic string) (int16, error) {
	if topic == "" {
		topic = aclCheckSuffix
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = txn, -1, -1
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{rt}
	resp, err := req.RequestWith(ctx, broker)
	if err != nil {
		return 0, err
	}
	if resp.ErrorCode != 0 {
		return resp.ErrorCode, nil
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			return p.ErrorCode, nil
		}
	}
	return 0, errors.New("AddPartitionsToTxn answered no partition")
}

// topicExists asks the broker whether it has topic; a topic the principal
// may not DESCRIBE is not known to exist.
func topicExists(ctx context.Context, broker *kgo.Broker, topic string) (bool, error) {
	code, err := topicMetadataCode(ctx, broker, topic)
	return err == nil && code == 0, err
}

// topicMetadataCode is the broker's error code for topic in a Metadata
// request without auto-creation.
func topicMetadataCode(ctx context.Context, broker *kgo.Broker, topic string) (int16, error) {
	md := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	md.Topics = []kmsg.MetadataRequestTopic{t}
	resp, err := md.RequestWith(ctx, broker)
	if err != nil {
		return 0, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	if len(resp.Topics) != 1 {
		return 0, fmt.Errorf("metadata of %s: %d topics answered", topic, len(resp.Topics))
	}
	return resp.Topics[0].ErrorCode, nil
}
