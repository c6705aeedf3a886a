//go:build e2e

package scenarios

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestStreamsProxyDeleteGroup39: deleting a streams group through
// streamshift on Kafka 3.9 with kafka-streams-groups: refused while a member
// runs (NON_EMPTY_GROUP), then, once the app closed, the group's state, its
// anchor member and its committed offsets are gone, upstream included.
func TestStreamsProxyDeleteGroup39(t *testing.T) {
	t.Parallel()
	dir, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(dir, "broker")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	px, err := harness.StartProxy(ctx, harness.ProxyOptions{Dir: filepath.Join(dir, "proxy"), Upstream: b.Bootstrap, Streams: harness.Streams44TestSettings})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Stop()
	if err := harness.CreateTopics(ctx, b.Bootstrap, 2, "e2e-input", "e2e-output"); err != nil {
		t.Fatal(err)
	}
	prod, err := harness.StartProducer(harness.ProducerOptions{Bootstrap: b.Bootstrap, Topic: "e2e-input", Rate: 50, Groups: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Stop()

	app, err := harness.StartApp(harness.AppOptions{Name: "a1", Dir: filepath.Join(dir, "app-a1"), Bootstrap: px.Bootstrap,
		GroupProtocol: "streams", Guarantee: "exactly_once_v2", CommitIntervalMs: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Stop()
	if _, err := app.WaitEvent(ctx, func(ev harness.Event) bool { return ev.Kind == "processed" && ev.Count > 0 }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // a few commits

	out, err := harness.RunTool(ctx, dir, "kafka-streams-groups", "--bootstrap-server", px.Bootstrap, "--delete", "--group", streamsApp)
	if err == nil && !strings.Contains(out, "GroupNotEmptyException") {
		t.Fatalf("delete of a running group did not fail:\n%s", out)
	}
	if err := app.Stop(); err != nil {
		t.Fatal(err)
	}
	// The app left the group on close: it is Empty; its offsets are upstream.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	offs, err := adm.FetchOffsets(ctx, streamsApp)
	if err != nil || len(offs) == 0 {
		t.Fatalf("no committed offsets upstream before the delete: %v %v", offs, err)
	}
	if _, ok := offs["e2e-input"]; !ok {
		t.Fatalf("no committed offsets of e2e-input upstream: %v", offs)
	}

	// Kafka deletes any offset of an Empty streams group: so does
	// streamshift, although upstream its anchor member holds the group.
	out, err = harness.RunTool(ctx, dir, "kafka-streams-groups", "--bootstrap-server", px.Bootstrap, "--delete-offsets", "--group", streamsApp, "--input-topic", "e2e-input")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Error") || strings.Contains(out, "SUBSCRIBED") {
		t.Fatalf("delete-offsets of an Empty group:\n%s", out)
	}
	offs, err = adm.FetchOffsets(ctx, streamsApp)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := offs["e2e-input"]; ok {
		t.Fatalf("offsets of e2e-input left upstream after --delete-offsets: %v\n%s", offs, out)
	}

	out, err = harness.RunTool(ctx, dir, "kafka-streams-groups", "--bootstrap-server", px.Bootstrap, "--delete", "--group", streamsApp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Deletion of requested streams groups") || !strings.Contains(out, "successful") {
		t.Fatalf("delete:\n%s", out)
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := listed[streamsApp]; ok {
		t.Fatalf("group still listed upstream after the delete: %+v", listed[streamsApp])
	}
	offs, err = adm.FetchOffsets(ctx, streamsApp)
	if err == nil && len(offs) > 0 {
		t.Fatalf("offsets left upstream: %v", offs)
	}
	out, err = harness.RunTool(ctx, dir, "kafka-streams-groups", "--bootstrap-server", px.Bootstrap, "--list")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, streamsApp) {
		t.Fatalf("group still listed by streamshift after the delete:\n%s", out)
	}
}
