//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// oneAddressApp is a Kafka Streams 4.4 app of its own on the streams
// protocol (CountApp, exactly once), its input produced and its output
// read, all through the one address, running beside the smoke test.
type oneAddressApp struct {
	app  *harness.App
	feed *harness.Producer
	col  *harness.Collector
}

// startOneAddressApp creates the app's topics on the broker and starts its
// input, its output reader and the app, all bootstrapping to bootstrap.
func startOneAddressApp(ctx context.Context, t *testing.T, out, upstream, bootstrap string) (*oneAddressApp, error) {
	const input, output = "e2e-input", "e2e-output"
	if err := harness.CreateTopics(ctx, upstream, 4, input, output); err != nil {
		return nil, err
	}
	a := &oneAddressApp{}
	var err error
	if a.col, err = harness.StartCollector(bootstrap, output, true); err != nil {
		return nil, err
	}
	t.Cleanup(a.col.Close)
	if a.feed, err = harness.StartProducer(harness.ProducerOptions{Bootstrap: bootstrap, Topic: input, Rate: 20}); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = a.feed.Stop() })
	if a.app, err = harness.StartApp(harness.AppOptions{Name: "count", Build: harness.App44, Dir: filepath.Join(out, "app-count"),
		Bootstrap: bootstrap, GroupProtocol: "streams", Guarantee: "exactly_once_v2", Input: input, Output: output}); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = a.app.Stop() })
	return a, nil
}

// verify ends the input and checks the output: every count exactly once
// (each key's updates 1, 2, ..., N for the N acknowledged input records),
// with the app still running.
func (a *oneAddressApp) verify(ctx context.Context) error {
	if a.app.Exited() {
		return fmt.Errorf("the 4.4 streams app exited (see %s)", a.app.Dir)
	}
	if err := a.feed.Stop(); err != nil {
		return fmt.Errorf("the 4.4 streams app's input: %w", err)
	}
	expected := a.feed.Expected()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := a.col.WaitCaughtUp(ctx, expected); err != nil {
		return fmt.Errorf("the 4.4 streams app's output (%d records in, see %s): %w", a.feed.Acked(), a.app.Dir, err)
	}
	if err := harness.VerifyCounts(expected, a.col.Updates(), true); err != nil {
		return fmt.Errorf("the 4.4 streams app's output: %w", err)
	}
	return nil
}
