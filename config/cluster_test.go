package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestClusterKeys: the cluster.* keys load with their defaults, and bad
// values are refused naming the key.
func TestClusterKeys(t *testing.T) {
	cfg, _, err := Load([]string{"--upstream", "a:9092", "--listen", "10.0.0.5:9092"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.Cluster
	if cfg.ClusterListen() != "10.0.0.5:0" || k.AdvertisedAddress != "" || k.MaxInflightPerPeer != 4096 || k.MaxPeerBytes != 64<<20 || k.ForwardTimeout != 20*time.Second || k.TLSCAFile != "" {
		t.Fatalf("defaults: listen %s, %+v", cfg.ClusterListen(), k)
	}
	cfg, _, err = Load([]string{"--upstream", "a:9092"}, []string{"STREAMSHIFT_CLUSTER_LISTEN=:7000", "STREAMSHIFT_CLUSTER_ADVERTISED_ADDRESS=pod-0.headless:7000",
		"STREAMSHIFT_CLUSTER_FORWARD_TIMEOUT=5s", "STREAMSHIFT_CLUSTER_MAX_INFLIGHT_PER_PEER=10"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClusterListen() != ":7000" || cfg.Cluster.AdvertisedAddress != "pod-0.headless:7000" || cfg.Cluster.ForwardTimeout != 5*time.Second || cfg.Cluster.MaxInflightPerPeer != 10 {
		t.Fatalf("set: %+v", cfg.Cluster)
	}
	for env, want := range map[string]string{
		"STREAMSHIFT_CLUSTER_LISTEN=nope":              "cluster.listen",
		"STREAMSHIFT_CLUSTER_ADVERTISED_ADDRESS=:7000": "cluster.advertised-address",
		"STREAMSHIFT_CLUSTER_MAX_INFLIGHT_PER_PEER=0":  "cluster.max-inflight-per-peer",
		"STREAMSHIFT_CLUSTER_MAX_PEER_BYTES=1000":      "cluster.max-peer-bytes",
		"STREAMSHIFT_CLUSTER_FORWARD_TIMEOUT=0s":       "cluster.forward-timeout",
		"STREAMSHIFT_CLUSTER_TLS_CA_FILE=/etc/ca.pem":  "cluster.tls-ca-file",
	} {
		_, _, err := Load([]string{"--upstream", "a:9092"}, []string{env}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", env, err, want)
		}
	}
}
