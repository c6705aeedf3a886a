//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/streamshift/streamshift/e2e/harness"
)

// aclAnswer is what Kafka 4.4 and streamshift are compared on: an error
// code and message, and for a MISSING_INTERNAL_TOPICS status what follows
// the coordinator's own "Internal topics are missing" sentence.
type aclAnswer struct {
	Code    int16
	Message string
	Detail  string
}

func (a aclAnswer) String() string {
	return fmt.Sprintf("%v message %q detail %q", kerr.ErrorForCode(a.Code), a.Message, a.Detail)
}

func msgOf(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// heartbeatAnswer reduces a StreamsGroupHeartbeat answer to an aclAnswer.
func heartbeatAnswer(r *kmsg.StreamsGroupHeartbeatResponse) aclAnswer {
	a := aclAnswer{Code: r.ErrorCode, Message: msgOf(r.ErrorMessage)}
	for _, st := range r.Status {
		if st.StatusCode == 3 {
			if i := strings.Index(st.StatusDetail, "; "); i >= 0 {
				a.Detail = st.StatusDetail[i+2:]
			}
		}
	}
	return a
}

// compareWithKafka44 sends the authorization cases of checkAuthorization
// to a native Kafka 4.4 broker configured the same way (SASL_PLAINTEXT,
// the StandardAuthorizer, the same users and ACLs) and through streamshift
// in front of Kafka 3.9, and compares the error codes and messages.
func compareWithKafka44(ctx context.Context, r *harness.Run, addr string, clientTLS *tls.Config, scram512 func(string) sasl.Mechanism) error {
	dir := filepath.Join(r.Dir, "kafka-4.4")
	sec, overrides, err := harness.NewSecureListeners(filepath.Join(dir, "pki"), secureUsers)
	if err != nil {
		return err
	}
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka44, Dir: filepath.Join(dir, "broker"),
		Overrides: append(overrides, aclBrokerOverrides...)})
	if err != nil {
		return err
	}
	defer b.Stop()
	if err := sec.AddSCRAMUsers(ctx, b.Bootstrap); err != nil {
		return err
	}
	if err := createACLs(ctx, b.Bootstrap); err != nil {
		return err
	}
	if err := harness.CreateTopics(ctx, b.Bootstrap, 2, "e2e-input", "e2e-output"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	// Both sides are one broker; kgo sends the streams-group keys only to
	// a broker named, so the requests go to the one Metadata names.
	onBroker := func(opts ...kgo.Opt) (kmsg.Requestor, func(), error) {
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return nil, nil, err
		}
		md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil || len(md.Brokers) != 1 {
			cl.Close()
			return nil, nil, fmt.Errorf("metadata: %v %+v", err, md)
		}
		return cl.Broker(int(md.Brokers[0].NodeID)), cl.Close, nil
	}
	native := func(user string) (kmsg.Requestor, func(), error) {
		return onBroker(kgo.SeedBrokers(sec.SASLPlaintext), kgo.SASL(scram512(user)))
	}
	proxied := func(user string) (kmsg.Requestor, func(), error) {
		return onBroker(kgo.SeedBrokers(addr), kgo.DialTLSConfig(clientTLS), kgo.SASL(scram512(user)))
	}
	// __consumer_offsets is made at the first FindCoordinator.
	super, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		return err
	}
	defer super.Close()
	if _, err := untilCoordinator(ctx, func() (aclAnswer, error) {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorKeys = "acl-cli", []string{"acl-cli"}
		resp, err := fc.RequestWith(ctx, super)
		if err != nil || len(resp.Coordinators) != 1 {
			return aclAnswer{}, fmt.Errorf("find coordinator: %v %+v", err, resp)
		}
		return aclAnswer{Code: resp.Coordinators[0].ErrorCode}, nil
	}); err != nil {
		return err
	}
	// The allowed principal's group, so that a describe finds a topology
	// with a topic the describing principal may not DESCRIBE.
	for _, side := range []func(string) (kmsg.Requestor, func(), error){native, proxied} {
		cl, done, err := side("cli")
		if err != nil {
			return err
		}
		_, err = untilCoordinator(ctx, func() (aclAnswer, error) {
			resp, err := streamsJoin("acl-cli", "cli-cmp", []string{"e2e-input"}, "acl-cli-store-changelog").RequestWith(ctx, cl)
			if err != nil {
				return aclAnswer{}, err
			}
			return heartbeatAnswer(resp), nil
		})
		done()
		if err != nil {
			return fmt.Errorf("cli's join: %w", err)
		}
	}
	cases := []struct {
		name string
		user string
		ask  func(kmsg.Requestor) (aclAnswer, error)
	}{
		{"StreamsGroupHeartbeat without READ on the group", "intruder", func(cl kmsg.Requestor) (aclAnswer, error) {
			resp, err := streamsJoin("e2e-count", "intruder-cmp", []string{"e2e-input"}, "e2e-count-acl-changelog").RequestWith(ctx, cl)
			if err != nil {
				return aclAnswer{}, err
			}
			return heartbeatAnswer(resp), nil
		}},
		{"StreamsGroupHeartbeat naming a topic without DESCRIBE", "nocreate", func(cl kmsg.Requestor) (aclAnswer, error) {
			resp, err := streamsJoin("acl-nocreate", "nocreate-cmp-1", []string{"e2e-output"}, "acl-nocreate-store-changelog").RequestWith(ctx, cl)
			if err != nil {
				return aclAnswer{}, err
			}
			return heartbeatAnswer(resp), nil
		}},
		{"StreamsGroupHeartbeat without CREATE on its internal topic", "nocreate", func(cl kmsg.Requestor) (aclAnswer, error) {
			resp, err := streamsJoin("acl-nocreate", "nocreate-cmp-2", []string{"e2e-input"}, "acl-nocreate-store-changelog").RequestWith(ctx, cl)
			if err != nil {
				return aclAnswer{}, err
			}
			return heartbeatAnswer(resp), nil
		}},
		{"StreamsGroupDescribe without DESCRIBE on the group", "intruder", func(cl kmsg.Requestor) (aclAnswer, error) {
			return describeAnswer(ctx, cl, "e2e-count")
		}},
		{"StreamsGroupDescribe of a topology with a topic without DESCRIBE", "nocreate", func(cl kmsg.Requestor) (aclAnswer, error) {
			return describeAnswer(ctx, cl, "acl-cli")
		}},
	}
	var diffs []string
	for _, c := range cases {
		var answers [2]aclAnswer
		for i, side := range []func(string) (kmsg.Requestor, func(), error){native, proxied} {
			cl, done, err := side(c.user)
			if err != nil {
				return err
			}
			answers[i], err = untilCoordinator(ctx, func() (aclAnswer, error) { return c.ask(cl) })
			done()
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		if answers[0] != answers[1] {
			diffs = append(diffs, fmt.Sprintf("%s: Kafka 4.4 %s, streamshift %s", c.name, answers[0], answers[1]))
		}
		if answers[0].Code == 0 && answers[0].Detail == "" {
			diffs = append(diffs, fmt.Sprintf("%s: Kafka 4.4 allowed it (%s): the case tests nothing", c.name, answers[0]))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("authorization answers differ:\n  %s", strings.Join(diffs, "\n  "))
	}
	return nil
}

// describeAnswer is the StreamsGroupDescribe answer for group.
func describeAnswer(ctx context.Context, cl kmsg.Requestor, group string) (aclAnswer, error) {
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups = []string{group}
	resp, err := d.RequestWith(ctx, cl)
	if err != nil {
		return aclAnswer{}, err
	}
	if len(resp.Groups) != 1 {
		return aclAnswer{}, fmt.Errorf("%d groups described", len(resp.Groups))
	}
	g := resp.Groups[0]
	a := aclAnswer{Code: g.ErrorCode, Message: msgOf(g.ErrorMessage)}
	if len(g.Members) > 0 || g.Topology != nil {
		a.Detail = "members or topology shown"
	}
	return a, nil
}

// untilCoordinator asks until the answer is not that the coordinator is
// still loading or moving (a broker just started).
func untilCoordinator(ctx context.Context, ask func() (aclAnswer, error)) (aclAnswer, error) {
	for {
		a, err := ask()
		if err != nil {
			return a, err
		}
		switch a.Code {
		case kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code:
		default:
			return a, nil
		}
		select {
		case <-ctx.Done():
			return a, fmt.Errorf("still %s: %w", a, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
