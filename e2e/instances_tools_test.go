//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/e2e/harness"
)

// checkToolsThrough runs Kafka's 4.4 CLI tools through instance i, which
// does not own the streams group (docs/one-address.md §4: requests of
// several groups or none are split by owner, ListGroups asks every
// instance): kafka-groups --list shows the streams group as a streams
// group and a plain consumer group (owned by the streams group's owner
// too, so its requests hop) as a classic one; kafka-consumer-groups --list
// and --describe show the plain group and its committed offset;
// kafka-streams-groups --describe --members shows the streams group's
// members as its owner has them; kafka-configs --entity-type groups
// describes its streams configs. No tool prints an error line.
func (c *ssCluster) checkToolsThrough(ctx context.Context, dir string, i int, group string, owner int) error {
	addr := net.JoinHostPort(c.hosts[i], strconv.Itoa(c.port))
	v, err := c.view(ctx, i)
	if err != nil {
		return err
	}
	plain := ""
	for n := 0; plain == ""; n++ {
		g := fmt.Sprintf("e2e-plain-%d", n)
		if v.Owners[coordinator.PartitionFor(g, instancesLogPartitions)] == fmt.Sprintf("s%d", owner+1) {
			plain = g
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "e2e-input", Partition: 0, At: 1, LeaderEpoch: -1})
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, plain, os); err != nil {
		return fmt.Errorf("commit offsets of %s through s%d: %w", plain, i+1, err)
	}
	described, err := c.describeAt(ctx, owner, group)
	if err != nil || described.ErrorCode != 0 {
		return fmt.Errorf("describe %s at its owner s%d: %+v %v", group, owner+1, described, err)
	}

	tool := func(name string, args ...string) ([][]string, error) {
		out, err := harness.RunTool(ctx, dir, name, append([]string{"--bootstrap-server", addr}, args...)...)
		if err != nil {
			return nil, err
		}
		var rows [][]string
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "ERROR") || strings.Contains(line, "Error") || strings.Contains(line, "Exception") {
				return nil, fmt.Errorf("%s %v through s%d printed an error line: %s\n%s", name, args, i+1, line, out)
			}
			rows = append(rows, strings.Fields(line))
		}
		return rows, nil
	}
	// row is the first row whose first fields are want (case-insensitive).
	row := func(rows [][]string, want ...string) bool {
	next:
		for _, r := range rows {
			if len(r) < len(want) {
				continue
			}
			for j, w := range want {
				if !strings.EqualFold(r[j], w) {
					continue next
				}
			}
			return true
		}
		return false
	}

	rows, err := tool("kafka-groups", "--list")
	if err != nil {
		return err
	}
	if !row(rows, group, "streams") || !row(rows, plain, "classic") {
		return fmt.Errorf("kafka-groups --list through s%d: want %s as a streams group and %s as a classic one: %v", i+1, group, plain, rows)
	}
	if rows, err = tool("kafka-consumer-groups", "--list"); err != nil {
		return err
	}
	if !row(rows, plain) {
		return fmt.Errorf("kafka-consumer-groups --list through s%d lacks %s: %v", i+1, plain, rows)
	}
	if rows, err = tool("kafka-consumer-groups", "--describe", "--group", plain); err != nil {
		return err
	}
	if !row(rows, plain, "e2e-input", "0", "1") {
		return fmt.Errorf("kafka-consumer-groups --describe --group %s through s%d: want offset 1 of e2e-input[0]: %v", plain, i+1, rows)
	}
	if rows, err = tool("kafka-streams-groups", "--describe", "--group", group, "--members"); err != nil {
		return err
	}
	for _, m := range described.Members {
		if !row(rows, group, m.MemberID) {
			return fmt.Errorf("kafka-streams-groups --describe --group %s --members through s%d lacks member %s: %v", group, i+1, m.MemberID, rows)
		}
	}
	if rows, err = tool("kafka-configs", "--describe", "--entity-type", "groups", "--entity-name", group, "--all"); err != nil {
		return err
	}
	configs := false
	for _, r := range rows {
		configs = configs || (len(r) > 0 && strings.HasPrefix(r[0], "streams.session.timeout.ms="))
	}
	if !configs {
		return fmt.Errorf("kafka-configs --describe --entity-type groups --entity-name %s through s%d lacks its streams configs: %v", group, i+1, rows)
	}
	return nil
}
