package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/internal/testpki"
)

// SecureListeners are a broker's SASL_SSL, SASL_PLAINTEXT and SSL listeners
// next to its PLAINTEXT one (which the harness's own producer, collector and
// probes keep using), with a CA and PEM keystores made at test time.
type SecureListeners struct {
	SASLSSL       string // 127.0.0.1:<port>, SASL over TLS
	SASLPlaintext string // 127.0.0.1:<port>, SASL without TLS
	// SSL is TLS with client certificates required
	// (ssl.client.auth=required): a client's certificate must be signed by
	// CA.
	SSL    string
	CA     *testpki.CA
	CAFile string // PEM of the CA, a truststore for Java (ssl.truststore.type=PEM) and Go
	// Users are the SASL users and passwords: PLAIN users are in the
	// broker's JAAS configuration; SCRAM users are created by AddSCRAMUsers.
	Users map[string]string
}

// NewSecureListeners picks the ports and writes the broker's certificate
// (for 127.0.0.1 and localhost) and the CA into dir. Overrides are the
// server.properties lines for BrokerOptions.Overrides; they also set
// connections.max.reauth.ms, so that SASL clients re-authenticate on their
// open connections during a test (KIP-368).
func NewSecureListeners(dir string, users map[string]string) (*SecureListeners, []string, error) {
	ca, keystore, caFile, err := WriteBrokerKeystore(dir)
	if err != nil {
		return nil, nil, err
	}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, nil, err
	}
	s := &SecureListeners{
		SASLSSL:       net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		SASLPlaintext: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		SSL:           net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[2])),
		CA:            ca, CAFile: caFile, Users: users,
	}
	var plain strings.Builder
	plain.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
	for u, p := range users {
		fmt.Fprintf(&plain, " user_%s=\"%s\"", u, p)
	}
	plain.WriteString(";")
	scram := "org.apache.kafka.common.security.scram.ScramLoginModule required;"
	overrides := []string{
		"listeners=PLAINTEXT://127.0.0.1:@BPORT@,CONTROLLER://127.0.0.1:@CPORT@,SASL_SSL://" + s.SASLSSL + ",SASL_PLAINTEXT://" + s.SASLPlaintext + ",SSL://" + s.SSL,
		"advertised.listeners=PLAINTEXT://127.0.0.1:@BPORT@,SASL_SSL://" + s.SASLSSL + ",SASL_PLAINTEXT://" + s.SASLPlaintext + ",SSL://" + s.SSL,
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL",
		"listener.name.ssl.ssl.client.auth=required",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		// Re-authentication every 15 s (KIP-368) for SCRAM-SHA-256 and
		// PLAIN only: the tests' re-authentication checks use them, and
		// the Kafka Streams apps and streamshift's control plane
		// (SCRAM-SHA-512) keep their sessions. A transactional Produce of
		// an app was once left unanswered for 30 s around a
		// re-authentication (cause not found: docs/testing.md).
		"listener.name.sasl_ssl.scram-sha-256.connections.max.reauth.ms=15000",
		"listener.name.sasl_ssl.plain.connections.max.reauth.ms=15000",
		"listener.name.sasl_plaintext.plain.connections.max.reauth.ms=15000",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + keystore,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + caFile,
	}
	for _, l := range []string{"sasl_ssl", "sasl_plaintext"} {
		overrides = append(overrides,
			"listener.name."+l+".plain.sasl.jaas.config="+plain.String(),
			"listener.name."+l+".scram-sha-256.sasl.jaas.config="+scram,
			"listener.name."+l+".scram-sha-512.sasl.jaas.config="+scram)
	}
	return s, overrides, nil
}

// WriteBrokerKeystore makes a CA and a broker certificate for 127.0.0.1 and
// localhost, and writes Kafka's PEM keystore (ssl.keystore.type=PEM: the
// unencrypted PKCS#8 key, so no ssl.key.password, then the certificate)
// and the CA's PEM (a truststore for Java and Go) into dir.
func WriteBrokerKeystore(dir string) (ca *testpki.CA, keystore, caFile string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", "", err
	}
	if ca, err = testpki.NewCA("e2e-broker-ca"); err != nil {
		return nil, "", "", err
	}
	pair, err := ca.IssueNow("e2e-broker", "127.0.0.1", "localhost")
	if err != nil {
		return nil, "", "", err
	}
	keystore = filepath.Join(dir, "broker-keystore.pem")
	if err := os.WriteFile(keystore, append(append([]byte{}, pair.KeyPEM...), pair.CertPEM...), 0o600); err != nil {
		return nil, "", "", err
	}
	if caFile, err = ca.WriteCA(dir, "ca"); err != nil {
		return nil, "", "", err
	}
	return ca, keystore, caFile, nil
}

// AddSCRAMUsers creates SCRAM-SHA-512 and SCRAM-SHA-256 credentials for
// every user through the broker's PLAINTEXT listener (bootstrap), as
// kafka-configs --alter --add-config SCRAM-SHA-512=[...] would.
func (s *SecureListeners) AddSCRAMUsers(ctx context.Context, bootstrap string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// One call per mechanism: a request names a user once.
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha512, kadm.ScramSha256} {
		var ups []kadm.UpsertSCRAM
		for u, p := range s.Users {
			ups = append(ups, kadm.UpsertSCRAM{User: u, Mechanism: m, Iterations: 4096, Password: p})
		}
		res, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, ups)
		if err != nil {
			return fmt.Errorf("create %s users: %w", m, err)
		}
		for u, r := range res {
			if r.Err != nil {
				return fmt.Errorf("create %s user %s: %w (%s)", m, u, r.Err, r.ErrMessage)
			}
		}
	}
	return nil
}

// JavaClientProps are the client properties of a Java client (app, CLI
// tool) connecting with SASL_SSL and mechanism to a listener whose
// certificate is signed by the CA in caFile.
func JavaClientProps(mechanism, user, pass, caFile string) []string {
	module := "org.apache.kafka.common.security.scram.ScramLoginModule"
	if mechanism == "PLAIN" {
		module = "org.apache.kafka.common.security.plain.PlainLoginModule"
	}
	return []string{
		"security.protocol=SASL_SSL",
		"sasl.mechanism=" + mechanism,
		fmt.Sprintf(`sasl.jaas.config=%s required username="%s" password="%s";`, module, user, pass),
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + caFile,
	}
}

// WriteClientProperties writes props as a client.properties file (for a
// CLI tool's --command-config) and returns its path.
func WriteClientProperties(dir, name string, props []string) (string, error) {
	f := filepath.Join(dir, name+".properties")
	return f, os.WriteFile(f, []byte(strings.Join(props, "\n")+"\n"), 0o600)
}
