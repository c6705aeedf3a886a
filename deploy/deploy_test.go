// Package deploy_test checks the deployment files against the code: a
// manifest that names a configuration key or a port streamshift does not
// have fails here, not in a user's cluster.
package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/streamshift/streamshift/config"
)

type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Ports []struct {
			Name string `yaml:"name"`
			Port int    `yaml:"port"`
		} `yaml:"ports"`
		Template struct {
			Spec struct {
				Containers []struct {
					Env []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func manifests(t *testing.T, path string) []manifest {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []manifest
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var m manifest
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if m.Kind != "" {
			out = append(out, m)
		}
	}
}

// TestKubernetesManifest: the StatefulSet's STREAMSHIFT_* variables are
// configuration keys streamshift knows, and together (with a pod's name
// put in) a configuration `streamshift run` accepts; every port it serves
// (bootstrap, one per node id, admin) is a container port and a port of the
// headless Service, and the bootstrap Service exposes the bootstrap port.
func TestKubernetesManifest(t *testing.T) {
	known := map[string]bool{}
	for _, s := range config.Settings() {
		known[s.Env] = true
	}
	var set *manifest
	services := map[string]manifest{}
	for _, m := range manifests(t, "kubernetes/streamshift.yaml") {
		switch m.Kind {
		case "StatefulSet":
			set = &m
		case "Service":
			services[m.Metadata.Name] = m
		}
	}
	if set == nil || len(set.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("no StatefulSet with one container")
	}
	c := set.Spec.Template.Spec.Containers[0]
	pod := strings.NewReplacer("$(POD_NAME)", "streamshift-0", "$(POD_NAMESPACE)", "default")
	var environ []string
	for _, e := range c.Env {
		if !strings.HasPrefix(e.Name, config.EnvPrefix) {
			continue
		}
		if !known[e.Name] {
			t.Errorf("%s is no configuration key of streamshift", e.Name)
		}
		environ = append(environ, e.Name+"="+pod.Replace(e.Value))
	}
	cfg, warnings, err := config.Load(nil, environ, io.Discard)
	if err != nil {
		t.Fatalf("the StatefulSet's configuration is refused: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("the StatefulSet's configuration warns: %v", warnings)
	}
	_, listenPort, _ := strings.Cut(cfg.Listen, ":")
	want := map[int]string{atoi(t, listenPort): "bootstrap"}
	for id := cfg.NodeIDMin; id <= cfg.NodeIDMax; id++ {
		want[cfg.NodePortBase+int(id)] = "node " + strconv.Itoa(int(id))
	}
	_, adminPort, _ := strings.Cut(cfg.AdminListen, ":")
	want[atoi(t, adminPort)] = "admin"
	// The internal listener: the other instances' links, through the
	// headless Service (each pod's own name).
	_, clusterPort, _ := strings.Cut(cfg.ClusterListen(), ":")
	want[atoi(t, clusterPort)] = "cluster"
	if _, advPort, _ := strings.Cut(cfg.Cluster.AdvertisedAddress, ":"); !strings.Contains(cfg.Cluster.AdvertisedAddress, "streamshift-headless") || advPort != clusterPort {
		t.Errorf("cluster.advertised-address %q: want the pod's name in the headless Service, port %s", cfg.Cluster.AdvertisedAddress, clusterPort)
	}
	containerPorts := map[int]bool{}
	for _, p := range c.Ports {
		containerPorts[p.ContainerPort] = true
	}
	headless := map[int]bool{}
	for _, p := range services["streamshift-headless"].Spec.Ports {
		headless[p.Port] = true
	}
	for port, what := range want {
		if !containerPorts[port] || !headless[port] {
			t.Errorf("the %s port %d is not a container port and a port of streamshift-headless", what, port)
		}
	}
	if len(containerPorts) != len(want) {
		t.Errorf("container ports %v, want exactly %v", containerPorts, want)
	}
	if b := services["streamshift"].Spec.Ports; len(b) != 1 || b[0].Port != atoi(t, listenPort) {
		t.Errorf("the bootstrap Service exposes %v, want the bootstrap port %s", b, listenPort)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("port %q: %v", s, err)
	}
	return n
}
