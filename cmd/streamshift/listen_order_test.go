package main

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/internal/testlog"
)

// TestTakenPortStopsBeforeUpstream: with a node port already taken,
// `streamshift run` stops with an error naming the port and its node, and
// has changed nothing upstream: no group-log topic, no instance group.
func TestTakenPortStopsBeforeUpstream(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cfg *config.Config
	for attempt := 0; ; attempt++ {
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := taken.Addr().(*net.TCPAddr).Port
		// Node 1 is served on base+1, the taken port.
		args := []string{"--upstream", c.ListenAddrs()[0], "--listen", "127.0.0.1:" + strconv.Itoa(port-2),
			"--node-port-base", strconv.Itoa(port - 1), "--node-id-min", "0", "--node-id-max", "1",
			"--admin-listen", "", "--proxy-id", "taken"}
		cfg, _, err = config.Load(args, []string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=true"}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		logs := &testlog.Buffer{}
		code := serve(ctx, cfg, zerolog.New(logs), nil)
		taken.Close()
		want := "listen 127.0.0.1:" + strconv.Itoa(port) + " (node 1): address already in use"
		if code == 1 && !strings.Contains(logs.String(), want) && strings.Contains(logs.String(), "address already in use") && attempt < 10 {
			continue // another process holds one of the ports below
		}
		if code != 1 {
			t.Fatalf("serve exited with %d, want 1; log:\n%s", code, logs)
		}
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("log does not say %q:\n%s", want, logs)
		}
		break
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has(cfg.Coordinator.LogTopic) {
		t.Errorf("group-log topic %s created upstream before the listeners were bound", cfg.Coordinator.LogTopic)
	}
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := groups[cfg.InstanceGroup()]; ok {
		t.Errorf("instance group %s joined upstream before the listeners were bound", cfg.InstanceGroup())
	}
}

// TestTakenClusterPortStopsBeforeUpstream: with cluster.listen taken, the
// instance stops with an error naming it before it creates the group log
// or joins the instance group.
func TestTakenClusterPortStopsBeforeUpstream(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// The client ports are picked free and closed again, so another test
	// may take one meanwhile: then the start fails on that port, not on
	// cluster.listen, and the test tries other ports.
	var cfg *config.Config
	for attempt := 0; ; attempt++ {
		free, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := free.Addr().(*net.TCPAddr).Port
		free.Close()
		args := []string{"--upstream", c.ListenAddrs()[0], "--listen", "127.0.0.1:" + strconv.Itoa(port),
			"--node-id-min", "0", "--node-id-max", "0", "--admin-listen", "", "--proxy-id", "taken"}
		cfg, _, err = config.Load(args, []string{"STREAMSHIFT_COORDINATOR_DURABLE_LOG=true", "STREAMSHIFT_CLUSTER_LISTEN=" + taken.Addr().String()}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		logs := &testlog.Buffer{}
		if code := serve(ctx, cfg, zerolog.New(logs), nil); code != 1 {
			t.Fatalf("serve exited with %d, want 1; log:\n%s", code, logs)
		}
		want := "cluster.listen " + taken.Addr().String()
		if strings.Contains(logs.String(), want) && strings.Contains(logs.String(), "address already in use") {
			break
		}
		if attempt == 5 || strings.Contains(logs.String(), "cluster.listen") {
			t.Fatalf("log does not say %q is in use:\n%s", want, logs)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopicsWithInternal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has(cfg.Coordinator.LogTopic) {
		t.Errorf("group-log topic %s created upstream before the internal listener was bound", cfg.Coordinator.LogTopic)
	}
}
