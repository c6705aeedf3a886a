//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestUpstreamConfig: streamshift configured by a Kafka client properties
// file alone (--upstream-config, no --upstream), the same file Kafka's own
// tools take with --command-config, against one Kafka 3.9 broker with an
// SSL listener that requires client certificates and a SASL_SSL one
// (SCRAM). The stores are made by keytool, as an operator makes them:
//   - SSL with a JKS truststore and a JKS keystore;
//   - SSL with a PKCS#12 truststore and keystore;
//   - SASL_SSL with sasl.jaas.config (SCRAM-SHA-512) and a JKS truststore,
//     the durable group log on, and streamshift's own listener serving TLS
//     from a JKS keystore (tls.keystore-location).
//
// Each file first passes kafka-topics --command-config against the broker;
// then, through streamshift, a franz-go client produces and consumes in a
// consumer group (its connections forwarded over the file's TLS, with the
// file's client certificate on the SSL listener), and a streams group
// streamshift serves gets a member and its changelog topic, which only the
// control plane (metadata, CreateTopics, the anchor, the group log) over
// the file's TLS and SASL can make.
func TestUpstreamConfig(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("keytool"); err != nil {
		t.Skip("keytool (a JDK) is needed to make the stores")
	}
	dir := t.TempDir()
	sec, overrides, err := harness.NewSecureListeners(filepath.Join(dir, "broker-pki"), secureUsers)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(dir, "broker"), Overrides: overrides})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	if err := sec.AddSCRAMUsers(ctx, b.Bootstrap); err != nil {
		t.Fatal(err)
	}
	st, err := makeStores(ctx, filepath.Join(dir, "stores"), sec)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name    string
		props   []string
		args    []string // more streamshift flags
		env     []string
		clients []kgo.Opt // the client's own TLS and credentials, passed through
	}{
		{
			name: "SSL, JKS truststore and keystore",
			props: []string{"bootstrap.servers=" + sec.SSL, "security.protocol=SSL",
				"ssl.truststore.location=" + st.trustJKS, "ssl.truststore.password=" + storeSecret,
				"ssl.keystore.location=" + st.keyJKS, "ssl.keystore.password=" + storeSecret, "ssl.key.password=" + storeSecret},
		},
		{
			name: "SSL, PKCS12 truststore and keystore",
			props: []string{"bootstrap.servers=" + sec.SSL, "security.protocol=SSL",
				"ssl.truststore.type=PKCS12", "ssl.truststore.location=" + st.trustP12, "ssl.truststore.password=" + storeSecret,
				"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + st.keyP12, "ssl.keystore.password=" + storeSecret},
		},
		{
			name: "SASL_SSL, SCRAM-SHA-512 in sasl.jaas.config, durable group log, TLS listener from a JKS keystore",
			props: []string{"bootstrap.servers=" + sec.SASLSSL, "security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512",
				`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \`,
				`    username="streamshift" password="` + secureUsers["streamshift"] + `";`,
				"ssl.truststore.type=JKS", "ssl.truststore.location=" + st.trustJKS, "ssl.truststore.password=" + storeSecret},
			args: []string{"--tls-keystore-location", st.listenerJKS, "--tls-keystore-password", storeSecret},
			env:  []string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=true"},
			clients: []kgo.Opt{kgo.SASL(scram.Auth{User: "cli", Pass: secureUsers["cli"]}.AsSha512Mechanism()),
				kgo.DialTLSConfig(&tls.Config{RootCAs: sec.CA.Pool(), MinVersion: tls.VersionTLS12})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slug := strings.ToLower(strings.NewReplacer(",", "", " ", "-", "_", "-").Replace(tc.name))[:12]
			file, err := harness.WriteClientProperties(dir, slug, tc.props)
			if err != nil {
				t.Fatal(err)
			}
			// Kafka's words: the tools take the same file.
			broker := strings.TrimPrefix(tc.props[0], "bootstrap.servers=")
			if _, err := harness.RunTool(ctx, dir, "kafka-topics", "--bootstrap-server", broker, "--command-config", file, "--list"); err != nil {
				t.Fatalf("Kafka's own tool refuses the file: %v", err)
			}
			px, err := harness.StartProxy(ctx, harness.ProxyOptions{
				Dir: filepath.Join(dir, "proxy-"+slug), UpstreamConfig: file,
				Args: tc.args, Env: tc.env, Probe: tc.clients,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer px.Stop()
			topic := "upcfg-" + slug
			if err := produceConsumeThrough(ctx, px.Bootstrap, topic, tc.clients); err != nil {
				t.Fatalf("client through streamshift (log %s): %v", px.Log, err)
			}
			if err := streamsGroupThrough(ctx, px.Bootstrap, b.Bootstrap, topic, tc.clients); err != nil {
				t.Fatalf("streams group through streamshift (log %s): %v", px.Log, err)
			}
			if slices.Contains(tc.env, "STREAMSHIFT_COORDINATOR_DURABLE_LOG=true") {
				// The group log, written by the control plane.
				if err := changelogCreated(ctx, b.Bootstrap, "__streamshift_groups"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

const storeSecret = "store-secret"

// stores are the truststores (the broker's CA) and keystores (a client
// certificate the broker's CA signed, for streamshift) in JKS and PKCS#12,
// and a JKS keystore of streamshift's listener certificate (127.0.0.1, the
// same CA).
type stores struct{ trustJKS, trustP12, keyJKS, keyP12, listenerJKS string }

// makeStores makes the stores with keytool (and openssl, which alone can
// turn a PEM key into a store keytool then converts).
func makeStores(ctx context.Context, dir string, sec *harness.SecureListeners) (*stores, error) {
	pair, err := sec.CA.IssueNow("streamshift")
	if err != nil {
		return nil, err
	}
	listener, err := sec.CA.IssueNow("streamshift-listener", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cert, key, err := pair.Write(dir, "streamshift")
	if err != nil {
		return nil, err
	}
	lcert, lkey, err := listener.Write(dir, "listener")
	if err != nil {
		return nil, err
	}
	s := &stores{
		trustJKS: filepath.Join(dir, "truststore.jks"), trustP12: filepath.Join(dir, "truststore.p12"),
		keyJKS: filepath.Join(dir, "keystore.jks"), keyP12: filepath.Join(dir, "keystore.p12"),
		listenerJKS: filepath.Join(dir, "listener.jks"),
	}
	openssl, lopenssl := filepath.Join(dir, "openssl.p12"), filepath.Join(dir, "listener-openssl.p12")
	for _, c := range [][]string{
		{"keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", sec.CAFile, "-keystore", s.trustJKS, "-storetype", "JKS", "-storepass", storeSecret},
		{"keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", sec.CAFile, "-keystore", s.trustP12, "-storetype", "PKCS12", "-storepass", storeSecret},
		{"openssl", "pkcs12", "-export", "-in", cert, "-inkey", key, "-name", "streamshift", "-out", openssl, "-passout", "pass:" + storeSecret},
		{"keytool", "-importkeystore", "-noprompt", "-srckeystore", openssl, "-srcstoretype", "PKCS12", "-srcstorepass", storeSecret,
			"-destkeystore", s.keyP12, "-deststoretype", "PKCS12", "-deststorepass", storeSecret},
		{"keytool", "-importkeystore", "-noprompt", "-srckeystore", openssl, "-srcstoretype", "PKCS12", "-srcstorepass", storeSecret,
			"-destkeystore", s.keyJKS, "-deststoretype", "JKS", "-deststorepass", storeSecret, "-destkeypass", storeSecret},
		{"openssl", "pkcs12", "-export", "-in", lcert, "-inkey", lkey, "-name", "listener", "-out", lopenssl, "-passout", "pass:" + storeSecret},
		{"keytool", "-importkeystore", "-noprompt", "-srckeystore", lopenssl, "-srcstoretype", "PKCS12", "-srcstorepass", storeSecret,
			"-destkeystore", s.listenerJKS, "-deststoretype", "JKS", "-deststorepass", storeSecret, "-destkeypass", storeSecret},
	} {
		if out, err := exec.CommandContext(ctx, c[0], c[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", strings.Join(c, " "), err, out)
		}
	}
	return s, nil
}

// produceConsumeThrough creates topic through addr, produces to it and
// reads everything back in a consumer group.
func produceConsumeThrough(ctx context.Context, addr, topic string, opts []kgo.Opt) error {
	cl, err := kgo.NewClient(slices.Concat([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ConsumeTopics(topic), kgo.ConsumerGroup(topic + "-group"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	const n = 50
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			return fmt.Errorf("produce %d: %w", i, err)
		}
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
	return cl.CommitUncommittedOffsets(ctx)
}

// streamsGroupThrough joins a streams group reading source through addr
// (streamshift serves it: the broker is 3.9) until the member is in it
// with tasks, and checks that the changelog topic its topology declares
// was created on the broker (by streamshift's control plane).
func streamsGroupThrough(ctx context.Context, addr, brokerPlaintext, source string, opts []kgo.Opt) error {
	cl, err := kgo.NewClient(slices.Concat([]kgo.Opt{kgo.SeedBrokers(addr)}, opts)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	group, member := source+"-app", source+"-member"
	changelog := group + "-store-changelog"
	req := streamsJoin(group, member, []string{source}, changelog)
	// kgo does not look up the coordinator of a streams-group request:
	// FindCoordinator through streamshift, then heartbeat there as a
	// member does until it has tasks.
	var coordinator kmsg.Requestor
	step := func() (done bool, state string) {
		if coordinator == nil {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
			resp, err := fc.RequestWith(ctx, cl)
			if err != nil || len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
				return false, fmt.Sprintf("find coordinator: %v %+v", err, resp)
			}
			coordinator = cl.Broker(int(resp.Coordinators[0].NodeID))
		}
		resp, err := req.RequestWith(ctx, coordinator)
		if err != nil {
			return false, err.Error()
		}
		if resp.ErrorCode != 0 {
			return false, kerr.ErrorForCode(resp.ErrorCode).Error()
		}
		req.MemberEpoch, req.Topology = resp.MemberEpoch, nil
		return resp.MemberEpoch > 0 && len(resp.ActiveTasks) > 0, fmt.Sprintf("epoch %d, tasks of %d subtopologies", resp.MemberEpoch, len(resp.ActiveTasks))
	}
	for {
		done, state := step()
		if done {
			return changelogCreated(ctx, brokerPlaintext, changelog)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("member of %s: %s: %w", group, state, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// changelogCreated waits until topic exists on the broker.
func changelogCreated(ctx context.Context, broker, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
		if err == nil && td.Has(topic) && td[topic].Err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("changelog %s not created upstream: %v", topic, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
