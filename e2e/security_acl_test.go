//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/streamshift/streamshift/e2e/harness"
)

// aclBrokerOverrides turn Kafka's StandardAuthorizer on for
// TestSecuritySASLSSL's broker. ANONYMOUS is the PLAINTEXT listener the
// harness's producer, collector and probes use (and the controller's), and
// "streamshift" is the control plane: both are super users. Every other
// principal gets only what aclBindings grants.
var aclBrokerOverrides = []string{
	"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"super.users=User:ANONYMOUS;User:streamshift",
}

// aclBindings are the test's ACLs:
//   - "app", the Streams app, exactly what Kafka's docs list for a Streams
//     app (streams/developer-guide/security.md): READ on its group, READ
//     on the input, WRITE on the output, everything on the topics prefixed
//     by its application id (internal topics: create, read, write,
//     describe, delete records), WRITE on its transactional ids (EOS), and
//     IDEMPOTENT_WRITE on the cluster;
//   - "cli", the franz-go checks and Kafka's CLI tools: everything;
//   - "intruder": DESCRIBE on the input topic, on group acl-denied and on
//     its internal topics (so that its Streams app gets as far as the
//     group's READ: FindCoordinator and the topology's metadata pass),
//     nothing else;
//   - "nocreate": READ on group acl-nocreate, DESCRIBE on the input and on
//     the topics prefixed acl-nocreate-, no CREATE; DESCRIBE on group
//     acl-cli (whose changelog it may not DESCRIBE).
func aclBindings() []*kadm.ACLBuilder {
	lit, pre := kadm.ACLPatternLiteral, kadm.ACLPatternPrefixed
	return []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:app").Groups("e2e-count").ResourcePatternType(lit).Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:app").Topics("e2e-input").ResourcePatternType(lit).Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:app").Topics("e2e-output").ResourcePatternType(lit).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:app").Topics("e2e-count").ResourcePatternType(pre).Operations(kadm.OpAll),
		kadm.NewACLs().Allow("User:app").TransactionalIDs("e2e-count").ResourcePatternType(pre).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:app").Clusters().Operations(kadm.OpIdempotentWrite),

		kadm.NewACLs().Allow("User:cli").Topics("*").Groups("*").TransactionalIDs("*").ResourcePatternType(lit).Operations(kadm.OpAll),
		kadm.NewACLs().Allow("User:cli").Clusters().Operations(kadm.OpAll),

		kadm.NewACLs().Allow("User:intruder").Topics("e2e-input").ResourcePatternType(lit).Operations(kadm.OpDescribe),
		kadm.NewACLs().Allow("User:intruder").Groups("acl-denied").ResourcePatternType(lit).Operations(kadm.OpDescribe),
		kadm.NewACLs().Allow("User:intruder").Topics("acl-denied-").ResourcePatternType(pre).Operations(kadm.OpDescribe),

		kadm.NewACLs().Allow("User:nocreate").Groups("acl-nocreate").ResourcePatternType(lit).Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:nocreate").Topics("e2e-input").ResourcePatternType(lit).Operations(kadm.OpDescribe),
		kadm.NewACLs().Allow("User:nocreate").Topics("acl-nocreate-").ResourcePatternType(pre).Operations(kadm.OpDescribe),
		kadm.NewACLs().Allow("User:nocreate").Groups("acl-cli").ResourcePatternType(lit).Operations(kadm.OpDescribe),
	}
}

// createACLs creates aclBindings through the broker's PLAINTEXT listener
// (a super user) and waits until the broker applies them.
func createACLs(ctx context.Context, bootstrap string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	want := 0
	for _, b := range aclBindings() {
		res, err := adm.CreateACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("create ACLs: %w", err)
		}
		for _, r := range res {
			if r.Err != nil {
				return fmt.Errorf("create ACL %s %s %s: %w (%s)", r.Principal, r.Type, r.Name, r.Err, r.ErrMessage)
			}
			want++
		}
	}
	// StandardAuthorizer applies ACLs from the metadata log: wait for all.
	var n int
	for {
		res, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().AllowHosts().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny))
		if err == nil {
			n = 0
			for _, r := range res {
				if r.Err != nil {
					err = r.Err
				}
				n += len(r.Described)
			}
			if err == nil && n >= want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ACLs not applied: %d of %d described (%v): %w", n, want, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// checkAuthorization asks streamshift, as principals other than the app's,
// for what it serves of the app's streams group and of two groups of
// their own; the broker decides each for the client's own principal:
//   - "intruder" (no READ on e2e-count): StreamsGroupHeartbeat
//     GROUP_AUTHORIZATION_FAILED without a message, StreamsGroupDescribe
//     GROUP_AUTHORIZATION_FAILED, and the classic Heartbeat, OffsetCommit,
//     OffsetFetch, DescribeGroups, OffsetDelete and DeleteGroups of the
//     served group refused with GROUP_AUTHORIZATION_FAILED (by the broker,
//     to which streamshift forwards them), ListGroups without it;
//   - "nocreate": a join whose changelog topic it may not CREATE gets
//     MISSING_INTERNAL_TOPICS with Kafka 4.4's "Unauthorized to CREATE on
//     topics ..." detail and the topic is not created; a join naming the
//     output topic, which it may not DESCRIBE, TOPIC_AUTHORIZATION_FAILED;
//   - "app" describes its group (members, topology) and lists it, but may
//     not describe or alter its configs (no DESCRIBE_CONFIGS or
//     ALTER_CONFIGS on the cluster: a 3.9 broker has no GROUP config
//     resource to ask about); "cli" may.
func checkAuthorization(ctx context.Context, addr string, clientTLS *tls.Config, scram512 func(string) sasl.Mechanism, broker string) error {
	client := func(user string) (*kgo.Client, *kgo.Broker, error) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(clientTLS), kgo.SASL(scram512(user)), kgo.RequestRetries(2))
		if err != nil {
			return nil, nil, err
		}
		// Streams-group requests go to the group's coordinator, which
		// kgo does not look up for them: FindCoordinator through
		// streamshift (describing a group's coordinator needs DESCRIBE
		// on it in Kafka, so ask for a group the user may see or the
		// super user's answer for e2e-count).
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorKeys = "e2e-count", []string{"e2e-count"}
		cli, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(clientTLS), kgo.SASL(scram512("cli")))
		if err != nil {
			cl.Close()
			return nil, nil, err
		}
		defer cli.Close()
		resp, err := fc.RequestWith(ctx, cli)
		if err != nil || len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
			cl.Close()
			return nil, nil, fmt.Errorf("find the coordinator of e2e-count: %v %+v", err, resp)
		}
		return cl, cl.Broker(int(resp.Coordinators[0].NodeID)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	intruder, ib, err := client("intruder")
	if err != nil {
		return err
	}
	defer intruder.Close()
	join := streamsJoin("e2e-count", "intruder-1", []string{"e2e-input"}, "e2e-count-acl-changelog")
	jr, err := join.RequestWith(ctx, ib)
	if err != nil {
		return fmt.Errorf("intruder's streams join: %w", err)
	}
	if jr.ErrorCode != kerr.GroupAuthorizationFailed.Code || jr.ErrorMessage != nil {
		return fmt.Errorf("intruder's streams join of e2e-count: %v (message %v), want GROUP_AUTHORIZATION_FAILED without a message", kerr.ErrorForCode(jr.ErrorCode), jr.ErrorMessage)
	}
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups = []string{"e2e-count"}
	dr, err := d.RequestWith(ctx, ib)
	if err != nil {
		return fmt.Errorf("intruder's describe: %w", err)
	}
	if len(dr.Groups) != 1 || dr.Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code || len(dr.Groups[0].Members) != 0 {
		return fmt.Errorf("intruder's StreamsGroupDescribe of e2e-count: %+v, want GROUP_AUTHORIZATION_FAILED", dr.Groups)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.Generation, hb.MemberID = "e2e-count", 1, "intruder-classic"
	hr, err := hb.RequestWith(ctx, ib)
	if err != nil || hr.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		return fmt.Errorf("intruder's classic Heartbeat of e2e-count: %v %v, want GROUP_AUTHORIZATION_FAILED", err, codeOf(hr, err))
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation, oc.MemberID = "e2e-count", 1, "intruder-classic"
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = "e2e-input"
	ocp := kmsg.NewOffsetCommitRequestTopicPartition()
	ocp.Partition, ocp.Offset = 0, 1
	oct.Partitions = append(oct.Partitions, ocp)
	oc.Topics = append(oc.Topics, oct)
	ocr, err := oc.RequestWith(ctx, ib)
	if err != nil || len(ocr.Topics) != 1 || len(ocr.Topics[0].Partitions) != 1 || ocr.Topics[0].Partitions[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		return fmt.Errorf("intruder's OffsetCommit to e2e-count: %v %+v, want GROUP_AUTHORIZATION_FAILED", err, ocr)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	ofg := kmsg.NewOffsetFetchRequestGroup()
	ofg.Group = "e2e-count"
	of.Groups = append(of.Groups, ofg)
	ofr, err := of.RequestWith(ctx, ib)
	if err != nil || len(ofr.Groups) != 1 || ofr.Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		return fmt.Errorf("intruder's OffsetFetch of e2e-count: %v %+v, want GROUP_AUTHORIZATION_FAILED", err, ofr)
	}

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"e2e-count"}
	dgr, err := dg.RequestWith(ctx, ib)
	if err != nil || len(dgr.Groups) != 1 || dgr.Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		return fmt.Errorf("intruder's DescribeGroups of e2e-count: %v %+v, want GROUP_AUTHORIZATION_FAILED", err, dgr)
	}
	lg := kmsg.NewPtrListGroupsRequest()
	lgr, err := lg.RequestWith(ctx, ib)
	if err != nil {
		return fmt.Errorf("intruder's ListGroups: %w", err)
	}
	for _, g := range lgr.Groups {
		if g.Group == "e2e-count" {
			return fmt.Errorf("intruder's ListGroups lists e2e-count, which it may not DESCRIBE")
		}
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "e2e-count"
	odt := kmsg.NewOffsetDeleteRequestTopic()
	odt.Topic = "e2e-input"
	odt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
	od.Topics = append(od.Topics, odt)
	odr, err := od.RequestWith(ctx, ib)
	if err != nil || odr.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		return fmt.Errorf("intruder's OffsetDelete of e2e-count: %v %+v, want GROUP_AUTHORIZATION_FAILED", err, odr)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"e2e-count"}
	delr, err := del.RequestWith(ctx, ib)
	if err != nil || len(delr.Groups) != 1 || delr.Groups[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
		return fmt.Errorf("intruder's DeleteGroups of e2e-count: %v %+v, want GROUP_AUTHORIZATION_FAILED", err, delr)
	}

	nocreate, nb, err := client("nocreate")
	if err != nil {
		return err
	}
	defer nocreate.Close()
	const changelog = "acl-nocreate-store-changelog"
	jr, err = streamsJoin("acl-nocreate", "nocreate-1", []string{"e2e-input"}, changelog).RequestWith(ctx, nb)
	if err != nil {
		return fmt.Errorf("nocreate's join: %w", err)
	}
	wantDetail := "Unauthorized to CREATE on topics " + changelog + "."
	if jr.ErrorCode != 0 || len(jr.Status) != 1 || jr.Status[0].StatusCode != 3 || !strings.HasSuffix(jr.Status[0].StatusDetail, "; "+wantDetail) {
		return fmt.Errorf("nocreate's join: %v %+v, want MISSING_INTERNAL_TOPICS ending %q", kerr.ErrorForCode(jr.ErrorCode), jr.Status, wantDetail)
	}
	super, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		return err
	}
	defer super.Close()
	topics, err := kadm.NewClient(super).ListTopics(ctx, changelog)
	if err != nil {
		return err
	}
	if topics.Has(changelog) {
		return fmt.Errorf("%s was created for a principal without CREATE", changelog)
	}
	jr, err = streamsJoin("acl-nocreate", "nocreate-2", []string{"e2e-output"}, changelog).RequestWith(ctx, nb)
	if err != nil {
		return fmt.Errorf("nocreate's join naming e2e-output: %w", err)
	}
	if jr.ErrorCode != kerr.TopicAuthorizationFailed.Code || jr.ErrorMessage != nil {
		return fmt.Errorf("nocreate's join naming e2e-output: %v, want TOPIC_AUTHORIZATION_FAILED", kerr.ErrorForCode(jr.ErrorCode))
	}

	// A principal allowed everything ("cli") passes each probe: streamshift
	// answers itself. DescribeGroups of a streams group is Kafka 4.4's
	// GROUP_ID_NOT_FOUND, an OffsetDelete of a source topic of the running
	// group GROUP_SUBSCRIBED_TO_TOPIC, and its own group's internal topic
	// is created.
	cli, cb, err := client("cli")
	if err != nil {
		return err
	}
	defer cli.Close()
	dgr, err = dg.RequestWith(ctx, cb)
	// v6+ GROUP_ID_NOT_FOUND "not a classic group", state Dead before.
	if err != nil || len(dgr.Groups) != 1 || !(dgr.Groups[0].ErrorCode == kerr.GroupIDNotFound.Code || dgr.Groups[0].ErrorCode == 0 && dgr.Groups[0].State == "Dead") {
		return fmt.Errorf("cli's DescribeGroups of e2e-count: %v %+v, want Kafka 4.4's answer for a streams group", err, dgr)
	}
	odr, err = od.RequestWith(ctx, cb)
	if err != nil || odr.ErrorCode != 0 || len(odr.Topics) != 1 || odr.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code {
		return fmt.Errorf("cli's OffsetDelete of e2e-count: %v %+v, want GROUP_SUBSCRIBED_TO_TOPIC", err, odr)
	}
	const cliChangelog = "acl-cli-store-changelog"
	for {
		jr, err = streamsJoin("acl-cli", "cli-1", []string{"e2e-input"}, cliChangelog).RequestWith(ctx, cb)
		if err != nil {
			return fmt.Errorf("cli's join: %w", err)
		}
		if jr.ErrorCode != 0 || len(jr.Status) > 0 && strings.Contains(jr.Status[0].StatusDetail, "Unauthorized") {
			return fmt.Errorf("cli's join: %v %+v", kerr.ErrorForCode(jr.ErrorCode), jr.Status)
		}
		topics, err := kadm.NewClient(super).ListTopics(ctx, cliChangelog)
		if err != nil {
			return err
		}
		if topics.Has(cliChangelog) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not created for a principal allowed to: %w", cliChangelog, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}

	if err := checkGroupConfigs(ctx, cb, 0); err != nil {
		return fmt.Errorf("cli (ALTER_CONFIGS and DESCRIBE_CONFIGS on the cluster): %w", err)
	}

	app, ab, err := client("app")
	if err != nil {
		return err
	}
	defer app.Close()
	if err := checkGroupConfigs(ctx, ab, kerr.GroupAuthorizationFailed.Code); err != nil {
		return fmt.Errorf("app (no configs permission): %w", err)
	}
	dr, err = d.RequestWith(ctx, ab)
	if err != nil {
		return fmt.Errorf("app's describe: %w", err)
	}
	if len(dr.Groups) != 1 || dr.Groups[0].ErrorCode != 0 || len(dr.Groups[0].Members) == 0 || dr.Groups[0].Topology == nil {
		return fmt.Errorf("app's StreamsGroupDescribe of e2e-count: %+v, want its members and topology", dr.Groups)
	}
	lgr, err = lg.RequestWith(ctx, ab)
	if err != nil {
		return fmt.Errorf("app's ListGroups: %w", err)
	}
	for _, g := range lgr.Groups {
		if g.Group == "e2e-count" {
			return nil
		}
	}
	return fmt.Errorf("app's ListGroups does not list e2e-count: %+v", lgr.Groups)
}

// checkGroupConfigs describes and alters (validate only: the running group
// keeps its settings) e2e-count's streams.* configs, which streamshift
// serves; want is the code each of the two answers for the group (0: the
// configs, GROUP_AUTHORIZATION_FAILED "Group authorization failed." as
// Kafka 4.4 answers a principal without DESCRIBE_CONFIGS / ALTER_CONFIGS).
func checkGroupConfigs(ctx context.Context, b *kgo.Broker, want int16) error {
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dres := kmsg.NewDescribeConfigsRequestResource()
	dres.ResourceType, dres.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "e2e-count"
	dc.Resources = append(dc.Resources, dres)
	dcr, err := dc.RequestWith(ctx, b)
	if err != nil || len(dcr.Resources) != 1 {
		return fmt.Errorf("DescribeConfigs of group e2e-count: %v %+v", err, dcr)
	}
	ac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ac.ValidateOnly = true
	ares := kmsg.NewIncrementalAlterConfigsRequestResource()
	ares.ResourceType, ares.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "e2e-count"
	one := "1"
	ares.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "streams.num.standby.replicas", Op: kmsg.IncrementalAlterConfigOpSet, Value: &one}}
	ac.Resources = append(ac.Resources, ares)
	acr, err := ac.RequestWith(ctx, b)
	if err != nil || len(acr.Resources) != 1 {
		return fmt.Errorf("IncrementalAlterConfigs of group e2e-count: %v %+v", err, acr)
	}
	d, a := dcr.Resources[0], acr.Resources[0]
	if want == 0 {
		if d.ErrorCode != 0 || len(d.Configs) == 0 || a.ErrorCode != 0 {
			return fmt.Errorf("group configs: describe %v (%d configs), alter %v %v; want both allowed", kerr.ErrorForCode(d.ErrorCode), len(d.Configs), kerr.ErrorForCode(a.ErrorCode), a.ErrorMessage)
		}
		return nil
	}
	refused := func(code int16, msg *string) bool {
		return code == want && msg != nil && *msg == "Group authorization failed."
	}
	if !refused(d.ErrorCode, d.ErrorMessage) || len(d.Configs) != 0 || !refused(a.ErrorCode, a.ErrorMessage) {
		return fmt.Errorf("group configs: describe %v %v (%d configs), alter %v %v; want %v \"Group authorization failed.\" for both",
			kerr.ErrorForCode(d.ErrorCode), d.ErrorMessage, len(d.Configs), kerr.ErrorForCode(a.ErrorCode), a.ErrorMessage, kerr.ErrorForCode(want))
	}
	return nil
}

// checkStreamsAppDenied starts a Kafka Streams 4.4 app on the streams
// protocol as "intruder", which may not READ its group: the client dies of
// the broker's GroupAuthorizationException, as against Kafka 4.4.
func checkStreamsAppDenied(ctx context.Context, r *harness.Run, addr, caFile string) error {
	a, err := harness.StartApp(harness.AppOptions{
		Name: "denied", Dir: filepath.Join(r.Dir, "app-denied"), Bootstrap: addr, ApplicationID: "acl-denied",
		GroupProtocol: "streams", Extra: harness.JavaClientProps("SCRAM-SHA-512", "intruder", secureUsers["intruder"], caFile),
	})
	if err != nil {
		return err
	}
	defer a.Stop()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	ev, err := a.WaitEvent(ctx, func(ev harness.Event) bool { return ev.Kind == "uncaught" })
	if err != nil {
		return fmt.Errorf("the intruder's Streams app did not fail: %w (log %s)", err, a.Log)
	}
	if !strings.Contains(ev.Error, "GroupAuthorizationException") {
		return fmt.Errorf("the intruder's Streams app failed with %s, want GroupAuthorizationException", ev.Error)
	}
	return nil
}

// streamsJoin is a first StreamsGroupHeartbeat of member with a topology of
// one subtopology reading sources and keeping a store in changelog.
func streamsJoin(group, member string, sources []string, changelog string) *kmsg.StreamsGroupHeartbeatRequest {
	join := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	join.Group, join.MemberID = group, member
	join.EndpointInformationEpoch = -1
	join.RebalanceTimeoutMillis = 30000
	pid := "process-" + member
	join.ProcessID = &pid
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID = "0"
	st.SourceTopics = sources
	st.StateChangelogTopics = []kmsg.TopicInfo{{Topic: changelog, Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}}}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	join.Topology = &topo
	join.ActiveTasks, join.StandbyTasks, join.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return join
}

func codeOf(r *kmsg.HeartbeatResponse, err error) error {
	if err != nil || r == nil {
		return err
	}
	if r.ErrorCode == 0 {
		return errors.New("no error")
	}
	return kerr.ErrorForCode(r.ErrorCode)
}
