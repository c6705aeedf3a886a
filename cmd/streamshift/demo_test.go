package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDemo starts `streamshift demo --produce words` as a process, produces
// and consumes through its bootstrap address with franz-go, sees the input
// stream flow, joins a streams-protocol group (served by streamshift: the
// embedded cluster plays Kafka 3.9) until it owns the topic's tasks, and
// stops it with SIGTERM: exit code 0 within the shutdown timeout.
func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	d := startDemo(t, "--produce", "words")
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.bootstrap), kgo.ClientID("demo-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// Produce and consume a record of our own.
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "check"); err != nil {
		t.Fatalf("create topic through the demo: %v", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "check", Key: []byte("k"), Value: []byte("hello demo")}).FirstErr(); err != nil {
		t.Fatalf("produce through the demo: %v", err)
	}
	got := consume(ctx, t, d.bootstrap, "check", 1)
	if string(got[0].Value) != "hello demo" {
		t.Fatalf("consumed %q, want %q", got[0].Value, "hello demo")
	}

	// The demo's input stream flows: key a word, value a line starting with it.
	for _, r := range consume(ctx, t, d.bootstrap, "words", 5) {
		if k := string(r.Key); k == "" || !strings.HasPrefix(string(r.Value), k+" ") {
			t.Fatalf("input record key %q value %q: want the value to start with the key", r.Key, r.Value)
		}
	}

	// A streams-protocol group over the input topic, served by streamshift.
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(versions.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
		return k.ApiKey == kmsg.StreamsGroupHeartbeat.Int16()
	}) {
		t.Fatal("the demo's bootstrap does not advertise StreamsGroupHeartbeat")
	}
	tasks := joinStreamsGroup(ctx, t, cl, "demo-app", "words")
	if len(tasks) != 1 || tasks[0].SubtopologyID != "0" || !slices.Equal(tasks[0].Partitions, []int32{0, 1, 2}) {
		t.Fatalf("active tasks %+v, want subtopology 0, partitions 0..2", tasks)
	}
	cl.Close()

	d.stop(t)
	if out := d.stdout(); !strings.Contains(out, "nothing on disk") || !strings.Contains(out, "group.protocol=streams") || !strings.Contains(out, "stopped") {
		t.Fatalf("demo output:\n%s", out)
	}
	// The coordinator's own log lines (the group epoch bumped by the join)
	// reach the process's log, as console lines (the demo's default).
	if b, err := os.ReadFile(d.logs); err != nil || !bytes.Contains(b, []byte(`component=coordinator`)) || !bytes.Contains(b, []byte("Bumped streams group epoch")) {
		t.Fatalf("demo logs lack the coordinator's lines (%v):\n%s", err, b)
	}
}

// TestDemoArgs: --produce is the demo's, --upstream is refused, the rest
// goes to run's configuration.
func TestDemoArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		rest  []string
		topic string
		err   string
	}{
		{[]string{"--produce", "words", "--listen", "127.0.0.1:1"}, []string{"--listen", "127.0.0.1:1"}, "words", ""},
		{[]string{"-produce=in", "--log-level=debug"}, []string{"--log-level=debug"}, "in", ""},
		{[]string{"--listen", "127.0.0.1:1"}, []string{"--listen", "127.0.0.1:1"}, "", ""},
		{[]string{"--upstream", "kafka:9092"}, nil, "", "--upstream"},
		{[]string{"--produce"}, nil, "", "needs a topic"},
		{[]string{"-h"}, nil, "", "help"},
	} {
		rest, topic, err := demoArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || topic != tc.topic || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: %q %q %v, want %q %q", tc.args, rest, topic, err, tc.rest, tc.topic)
		}
	}
	if _, _, err := demoArgs([]string{"--help"}); !errors.Is(err, errDemoHelp) {
		t.Errorf("--help: %v", err)
	}
}

// TestDemoLogFormat: the demo logs console lines unless the user chose a
// format by flag or variable.
func TestDemoLogFormat(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	if got := demoLogFormat([]string{"--listen", "x"}, none); !slices.Equal(got, []string{"--log-format", "console", "--listen", "x"}) {
		t.Errorf("default: %q", got)
	}
	for _, args := range [][]string{{"--log-format", "json"}, {"-log-format=json"}} {
		if got := demoLogFormat(args, none); !slices.Equal(got, args) {
			t.Errorf("%q: %q", args, got)
		}
	}
	env := func(k string) (string, bool) { return "json", k == "STREAMSHIFT_LOG_FORMAT" }
	if got := demoLogFormat(nil, env); len(got) != 0 {
		t.Errorf("with STREAMSHIFT_LOG_FORMAT: %q", got)
	}
}
