//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/internal/testpki"
)

// secureUsers are the SASL users of TestSecuritySASLSSL: streamshift's own
// control plane, the Streams app, and the other clients.
var secureUsers = map[string]string{"streamshift": "streamshift-secret", "app": "app-secret", "cli": "cli-secret",
	"intruder": "intruder-secret", "nocreate": "nocreate-secret"}

// TestSecuritySASLSSL: one Kafka 3.9 broker with SASL_SSL and SASL_PLAINTEXT
// listeners (PLAIN, SCRAM-SHA-256/512 users made at test start, CA and PEM
// keystores made at test time, re-authentication every 15s). streamshift
// speaks TLS to its clients (its own CA) and TLS to the broker, with its
// control plane authenticated as "streamshift"; every client authenticates
// as itself through it:
//   - Kafka Streams apps with exactly-once as "app" over SCRAM-SHA-512,
//     migrated online: a 4.4 and a 3.9 instance on the classic protocol,
//     rolled one at a time to 4.4 on the streams protocol (the takeover:
//     streamshift's anchor, describe and fencing run as "streamshift"
//     over TLS); output exact, no task on two instances, none closed
//     dirty;
//   - franz-go over SCRAM-SHA-256 (produce, consume in a group, across a
//     re-authentication on the same connections) and PLAIN; a wrong
//     password is the broker's SASL_AUTHENTICATION_FAILED;
//   - Kafka's CLI tools with a SASL_SSL client.properties: the group
//     streamshift serves (kafka-streams-groups) and a classic group
//     (kafka-consumer-groups);
//   - a second streamshift in front of SASL_PLAINTEXT, plaintext both sides;
//   - three streamshift instances sharing a group log there, whose links
//     authenticate as their control plane (checkClusterLinksSecure).
func TestSecuritySASLSSL(t *testing.T) {
	t.Parallel()
	pki := t.TempDir()
	sec, overrides, err := harness.NewSecureListeners(filepath.Join(pki, "broker"), secureUsers)
	if err != nil {
		t.Fatal(err)
	}
	// streamshift's listener certificate has a CA of its own: a client
	// trusting it cannot be talking to the broker directly.
	pf, err := testpki.NewServerFiles(pki, "streamshift", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	proxyCA, certFile, keyFile, proxyCAFile := pf.CA, pf.CertFile, pf.KeyFile, pf.CAFile
	clientTLS := &tls.Config{RootCAs: proxyCA.Pool(), MinVersion: tls.VersionTLS12}
	scram512 := func(user string) sasl.Mechanism {
		return scram.Auth{User: user, Pass: secureUsers[user]}.AsSha512Mechanism()
	}

	var proxyAddr, proxyLog string
	roll := &migrationRoll{ends: map[string]time.Time{}}
	rep := harness.RunScenario(t, harness.Scenario{
		Name:            "online migration to streams over SASL_SSL through streamshift, TLS on both sides",
		Broker:          harness.Kafka39,
		BrokerOverrides: append(overrides, aclBrokerOverrides...),
		AppBuild:        harness.App44,
		GroupProtocol:   "classic",
		Guarantee:       "exactly_once_v2",
		AppExtra:        harness.JavaClientProps("SCRAM-SHA-512", "app", secureUsers["app"], proxyCAFile),
		Hold:            5 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			if err := sec.AddSCRAMUsers(ctx, r.Broker.Bootstrap); err != nil {
				return "", err
			}
			if err := createACLs(ctx, r.Broker.Bootstrap); err != nil {
				return "", err
			}
			px, err := harness.StartProxy(ctx, harness.ProxyOptions{
				Dir: filepath.Join(r.Dir, "proxy"), Upstream: sec.SASLSSL, Streams: harness.Streams44TestSettings,
				Args: []string{"--admin-listen", "", "--log-level", "debug"},
				Env: []string{
					"STREAMSHIFT_TLS_CERT_FILE=" + certFile, "STREAMSHIFT_TLS_KEY_FILE=" + keyFile,
					"STREAMSHIFT_UPSTREAM_TLS_ENABLED=true", "STREAMSHIFT_UPSTREAM_TLS_CA_FILE=" + sec.CAFile,
					"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=SCRAM-SHA-512",
					"STREAMSHIFT_CONTROL_PLANE_SASL_USERNAME=streamshift",
					"STREAMSHIFT_CONTROL_PLANE_SASL_PASSWORD=" + secureUsers["streamshift"],
				},
				Probe: []kgo.Opt{kgo.DialTLSConfig(clientTLS), kgo.SASL(scram512("cli"))},
			})
			if err != nil {
				return "", err
			}
			r.T.Cleanup(func() { _ = px.Stop() })
			proxyAddr, proxyLog = px.Bootstrap, px.Log
			return px.Bootstrap, nil
		},
		Steps: []harness.Step{
			roll.start("c1", harness.App44, "classic"),
			roll.start("c2", harness.App39, "classic"),
			roll.replace("c1", "s1", "streams"),
			roll.replace("c2", "s2", "streams"),
			{Name: "franz-go over SASL_SSL (SCRAM-SHA-256 and PLAIN, re-authenticating; a wrong password)", Do: func(ctx context.Context, r *harness.Run) error {
				return checkFranzSecure(ctx, proxyAddr, clientTLS)
			}},
			{Name: "the broker's ACLs for what streamshift serves: other principals refused, as Kafka 4.4 refuses them", Do: func(ctx context.Context, r *harness.Run) error {
				return checkAuthorization(ctx, proxyAddr, clientTLS, scram512, r.Broker.Bootstrap)
			}},
			{Name: "the same authorization answers as a native Kafka 4.4 with the same ACLs", Do: func(ctx context.Context, r *harness.Run) error {
				return compareWithKafka44(ctx, r, proxyAddr, clientTLS, scram512)
			}},
			{Name: "a Kafka Streams 4.4 app without READ on its group dies of GroupAuthorizationException", Do: func(ctx context.Context, r *harness.Run) error {
				return checkStreamsAppDenied(ctx, r, proxyAddr, proxyCAFile)
			}},
			{Name: "CLI tools with a SASL_SSL client.properties", Do: func(ctx context.Context, r *harness.Run) error {
				return checkToolsSecure(ctx, r.Dir, proxyAddr, proxyCAFile)
			}},
			{Name: "franz-go over SASL_PLAINTEXT through a plaintext streamshift", Do: func(ctx context.Context, r *harness.Run) error {
				px, err := harness.StartProxy(ctx, harness.ProxyOptions{
					Dir: filepath.Join(r.Dir, "proxy-sasl-plaintext"), Upstream: sec.SASLPlaintext, Args: []string{"--admin-listen", ""},
					Env: []string{"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=PLAIN", "STREAMSHIFT_CONTROL_PLANE_SASL_USERNAME=streamshift",
						"STREAMSHIFT_CONTROL_PLANE_SASL_PASSWORD=" + secureUsers["streamshift"]},
					Probe: []kgo.Opt{kgo.SASL(scram512("cli"))},
				})
				if err != nil {
					return err
				}
				defer px.Stop()
				return produceConsumeSecure(ctx, px.Bootstrap, "secure-plaintext", nil, plain.Auth{User: "cli", Pass: secureUsers["cli"]}.AsMechanism())
			}},
			{Name: "three streamshift instances over SASL_PLAINTEXT: links authenticated as the control plane, a group through a non-owner, other principals' links refused", Do: func(ctx context.Context, r *harness.Run) error {
				return checkClusterLinksSecure(ctx, r, sec.SASLPlaintext, scram512)
			}},
			roll.check(),
		},
	})
	for i, s := range rep.Steps {
		if s.DirtyClose != 0 {
			t.Errorf("step %d (%s): %d tasks closed dirty", i+1, s.Step, s.DirtyClose)
		}
	}
	t.Logf("streamshift log: %s", proxyLog)
}

// checkFranzSecure runs franz-go through the TLS streamshift: SCRAM-SHA-256
// and PLAIN produce and group consume long enough for a re-authentication
// on an open connection (the broker's 15 s sessions of those mechanisms),
// and a wrong password.
func checkFranzSecure(ctx context.Context, addr string, clientTLS *tls.Config) error {
	if err := produceConsumeSecure(ctx, addr, "secure-scram", clientTLS, scram.Auth{User: "cli", Pass: secureUsers["cli"]}.AsSha256Mechanism()); err != nil {
		return fmt.Errorf("SCRAM-SHA-256: %w", err)
	}
	if err := produceConsumeSecure(ctx, addr, "secure-plain", clientTLS, plain.Auth{User: "cli", Pass: secureUsers["cli"]}.AsMechanism()); err != nil {
		return fmt.Errorf("PLAIN: %w", err)
	}
	bad, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(clientTLS), kgo.RequestRetries(0),
		kgo.SASL(scram.Auth{User: "cli", Pass: "wrong"}.AsSha512Mechanism()))
	if err != nil {
		return err
	}
	defer bad.Close()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := bad.Ping(pctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		return fmt.Errorf("wrong password through streamshift: %v, want SASL_AUTHENTICATION_FAILED from the broker", err)
	}
	return nil
}

// saslCount counts connections and SaslAuthenticate requests of a client:
// more authentications than connections (each of SCRAM's takes two
// SaslAuthenticate, PLAIN's one) is a re-authentication (KIP-368) on a
// connection that stayed open.
type saslCount struct{ conns, auths atomic.Int64 }

func (c *saslCount) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		c.conns.Add(1)
	}
}

func (c *saslCount) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil && key == int16(kmsg.SASLAuthenticate) {
		c.auths.Add(1)
	}
}

// produceConsumeSecure creates topic through addr, produces to it for longer
// than the broker's connections.max.reauth.ms and reads everything back in a
// consumer group, then checks a connection re-authenticated.
func produceConsumeSecure(ctx context.Context, addr, topic string, tlsCfg *tls.Config, m sasl.Mechanism) error {
	var count saslCount
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(m), kgo.WithHooks(&count), kgo.DefaultProduceTopic(topic),
		kgo.ConsumeTopics(topic), kgo.ConsumerGroup(topic + "-group"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if tlsCfg != nil {
		opts = append(opts, kgo.DialTLSConfig(tlsCfg))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	// 18s of records, one every 300ms: the broker's 15s session lifetime
	// ends on the open connections meanwhile.
	const n = 60
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			return fmt.Errorf("produce %d: %w", i, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	seen := map[string]bool{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("consumed %d of %d: %w", len(seen), n, ctx.Err())
		}
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	rounds := int64(1)
	if strings.HasPrefix(m.Name(), "SCRAM") {
		rounds = 2
	}
	if a, c := count.auths.Load(), count.conns.Load(); a <= rounds*c {
		return fmt.Errorf("%d SaslAuthenticate on %d connections (%s: %d per authentication): no re-authentication seen", a, c, m.Name(), rounds)
	}
	return nil
}

// checkToolsSecure runs Kafka's CLI tools through the TLS streamshift with a
// SASL_SSL client.properties: the streams group streamshift serves itself
// and the classic group of produceConsumeSecure.
func checkToolsSecure(ctx context.Context, dir, addr, caFile string) error {
	props, err := harness.WriteClientProperties(dir, "client-sasl-ssl", harness.JavaClientProps("SCRAM-SHA-512", "cli", secureUsers["cli"], caFile))
	if err != nil {
		return err
	}
	out, err := harness.RunTool(ctx, dir, "kafka-streams-groups", "--bootstrap-server", addr, "--command-config", props, "--describe", "--group", "e2e-count", "--members")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "e2e-count") || strings.Contains(out, "Error") {
		return fmt.Errorf("kafka-streams-groups --describe: no member of e2e-count:\n%s", out)
	}
	out, err = harness.RunTool(ctx, dir, "kafka-consumer-groups", "--bootstrap-server", addr, "--command-config", props, "--describe", "--group", "secure-scram-group")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "secure-scram") {
		return fmt.Errorf("kafka-consumer-groups --describe: no offsets of secure-scram:\n%s", out)
	}
	return nil
}
