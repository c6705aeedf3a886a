// Package deploy_test checks the deployment files against the code: a
// manifest that names a configuration key or a port streamshift does not
// have fails here, not in a user's cluster.
package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/streamshift/streamshift/config"
)

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

// probe is a container's HTTP probe.
type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"` // a container port's name
	} `yaml:"httpGet"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

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
		// A NetworkPolicy's.
		PodSelector labelSelector `yaml:"podSelector"`
		Ingress     []struct {
			From []struct {
				PodSelector       *labelSelector `yaml:"podSelector"`
				NamespaceSelector *labelSelector `yaml:"namespaceSelector"`
				IPBlock           any            `yaml:"ipBlock"`
			} `yaml:"from"`
			Ports []struct {
				Port int `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"ingress"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				SecurityContext struct {
					RunAsUser int `yaml:"runAsUser"`
					FSGroup   int `yaml:"fsGroup"`
				} `yaml:"securityContext"`
				Containers []struct {
					Env []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					StartupProbe   *probe `yaml:"startupProbe"`
					ReadinessProbe *probe `yaml:"readinessProbe"`
					LivenessProbe  *probe `yaml:"livenessProbe"`
					VolumeMounts   []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
						ReadOnly  bool   `yaml:"readOnly"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName  string `yaml:"secretName"`
						DefaultMode int    `yaml:"defaultMode"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
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
// put in) a configuration `streamshift run` accepts. The one address: the
// Service `streamshift` lists exactly the client ports (bootstrap, one per
// node id) and every instance advertises that Service's name; each
// instance's cluster.advertised-address is its own name in the headless
// Service, which lists the internal port only. Every port streamshift
// serves (those, admin) is a container port. The NetworkPolicy admits the
// client and admin ports, and the internal port from the StatefulSet's own
// pods only. The internal listener's port is fixed explicitly. The probes:
// startup and readiness on /readyz, liveness on /healthz. The admin token
// is a Secret's file.
func TestKubernetesManifest(t *testing.T) {
	known := map[string]bool{}
	for _, s := range config.Settings() {
		known[s.Env] = true
	}
	var set, policy *manifest
	services := map[string]manifest{}
	for _, m := range manifests(t, "kubernetes/streamshift.yaml") {
		switch m.Kind {
		case "StatefulSet":
			set = &m
		case "NetworkPolicy":
			policy = &m
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
	tokenFile := ""
	for _, e := range c.Env {
		if !strings.HasPrefix(e.Name, config.EnvPrefix) {
			continue
		}
		if e.Name == tokenFileEnv {
			// Its file exists in the pod only (checked below, against the
			// Secret's mount), not here.
			tokenFile = e.Value
			if !known[e.Name] {
				t.Logf("%s is not a configuration key of this build yet (admin.auth-token-file, issue #38)", e.Name)
			}
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
	clients := map[int]string{atoi(t, listenPort): "bootstrap"}
	for id := cfg.NodeIDMin; id <= cfg.NodeIDMax; id++ {
		clients[cfg.NodePortBase+int(id)] = "node " + strconv.Itoa(int(id))
	}
	_, adminPort, _ := strings.Cut(cfg.AdminListen, ":")
	admin := atoi(t, adminPort)
	// The internal listener: the other instances' links, through the
	// headless Service (each pod's own name).
	_, clusterPortS, _ := strings.Cut(cfg.ClusterListen(), ":")
	clusterPort := atoi(t, clusterPortS)
	if _, advPort, _ := strings.Cut(cfg.Cluster.AdvertisedAddress, ":"); !strings.HasPrefix(cfg.Cluster.AdvertisedAddress, "streamshift-0.streamshift-headless.") || advPort != clusterPortS {
		t.Errorf("cluster.advertised-address %q: want the pod's name in the headless Service, port %s", cfg.Cluster.AdvertisedAddress, clusterPortS)
	}
	// The internal listener takes a free port unless told: the manifest
	// fixes it, as the headless Service and the NetworkPolicy name it.
	if cfg.Cluster.Listen == "" || clusterPort == 0 {
		t.Errorf("cluster.listen %q: want a fixed port set explicitly (its default is a free port, which no Service or NetworkPolicy can name)", cfg.Cluster.Listen)
	}
	if h := cfg.AdvertisedHost; h != "streamshift" && !strings.HasPrefix(h, "streamshift.") {
		t.Errorf("advertised-host %q: want the client Service streamshift, the one address of every instance", h)
	}

	ports := func(m manifest) map[int]bool {
		out := map[int]bool{}
		for _, p := range m.Spec.Ports {
			out[p.Port] = true
		}
		return out
	}
	containerPorts := map[int]bool{}
	portByName := map[string]int{}
	for _, p := range c.Ports {
		containerPorts[p.ContainerPort] = true
		portByName[p.Name] = p.ContainerPort
	}

	// Probes: the start (waiting for Kafka, the group log, the instance
	// group) belongs to the startupProbe on /readyz, generous enough for a
	// broker restart; then readiness is /readyz and liveness /healthz,
	// which stays 200 while the brokers are unreachable.
	for _, pr := range []struct {
		what, path string
		p          *probe
	}{{"startupProbe", "/readyz", c.StartupProbe}, {"readinessProbe", "/readyz", c.ReadinessProbe}, {"livenessProbe", "/healthz", c.LivenessProbe}} {
		switch {
		case pr.p == nil || pr.p.HTTPGet == nil:
			t.Errorf("no %s with httpGet", pr.what)
		case pr.p.HTTPGet.Path != pr.path || portByName[pr.p.HTTPGet.Port] != admin:
			t.Errorf("%s asks %s on port %q, want %s on the admin port %d", pr.what, pr.p.HTTPGet.Path, pr.p.HTTPGet.Port, pr.path, admin)
		}
	}
	if p := c.StartupProbe; p != nil {
		if window := time.Duration(p.PeriodSeconds*p.FailureThreshold) * time.Second; window < minStartupWindow {
			t.Errorf("the startupProbe gives the start %v (periodSeconds × failureThreshold), want at least %v: a pod waiting for Kafka must not be restarted", window, minStartupWindow)
		}
	}

	// The admin token: a file of a Secret volume, mounted read-only,
	// readable by the container's user (fsGroup, mode 0440 or wider).
	if tokenFile == "" {
		t.Errorf("no %s: the admin port's capture control and pprof are open", tokenFileEnv)
	} else {
		mounted := false
		for _, m := range c.VolumeMounts {
			if path.Dir(tokenFile) != path.Clean(m.MountPath) {
				continue
			}
			for _, v := range set.Spec.Template.Spec.Volumes {
				if v.Name == m.Name && v.Secret != nil && m.ReadOnly {
					mounted = true
					if v.Secret.DefaultMode&0o040 == 0 || set.Spec.Template.Spec.SecurityContext.FSGroup == 0 {
						t.Errorf("the Secret %s is not readable by the container's group (defaultMode %#o, fsGroup %d)", v.Secret.SecretName, v.Secret.DefaultMode, set.Spec.Template.Spec.SecurityContext.FSGroup)
					}
				}
			}
		}
		if !mounted {
			t.Errorf("%s=%s is not in a read-only mount of a Secret volume", tokenFileEnv, tokenFile)
		}
	}
	want := map[int]string{admin: "admin", clusterPort: "cluster"}
	for p, what := range clients {
		want[p] = what
	}
	for port, what := range want {
		if !containerPorts[port] {
			t.Errorf("the %s port %d is not a container port", what, port)
		}
	}
	if len(containerPorts) != len(want) {
		t.Errorf("container ports %v, want exactly %v", containerPorts, want)
	}
	service := ports(services["streamshift"])
	for port, what := range clients {
		if !service[port] {
			t.Errorf("the %s port %d is not a port of the Service streamshift (the one address)", what, port)
		}
	}
	if len(service) != len(clients) {
		t.Errorf("the Service streamshift exposes %v, want exactly the client ports %v (never the internal or admin port)", service, clients)
	}
	if h := ports(services["streamshift-headless"]); len(h) != 1 || !h[clusterPort] {
		t.Errorf("the headless Service exposes %v, want the internal port %d only", h, clusterPort)
	}

	if policy == nil {
		t.Fatal("no NetworkPolicy")
	}
	pods := set.Spec.Template.Metadata.Labels
	selects := func(s *labelSelector) bool {
		if s == nil || len(s.MatchLabels) == 0 {
			return false
		}
		for k, v := range s.MatchLabels {
			if pods[k] != v {
				return false
			}
		}
		return true
	}
	if !selects(&policy.Spec.PodSelector) {
		t.Errorf("the NetworkPolicy selects %v, not the StatefulSet's pods %v", policy.Spec.PodSelector.MatchLabels, pods)
	}
	admitted := map[int]bool{}
	for _, rule := range policy.Spec.Ingress {
		own := len(rule.From) > 0
		for _, f := range rule.From {
			own = own && selects(f.PodSelector) && f.NamespaceSelector == nil && f.IPBlock == nil
		}
		for _, p := range rule.Ports {
			if p.Port == clusterPort && !own {
				t.Errorf("the NetworkPolicy admits the internal port %d from %+v, want the StatefulSet's pods only", clusterPort, rule.From)
			}
			admitted[p.Port] = true
		}
		if len(rule.Ports) == 0 {
			t.Errorf("a NetworkPolicy rule admits every port (the internal one included) from %+v", rule.From)
		}
	}
	for port, what := range want {
		if !admitted[port] {
			t.Errorf("the NetworkPolicy does not admit the %s port %d", what, port)
		}
	}
}

// tokenFileEnv is admin.auth-token-file's variable.
const tokenFileEnv = config.EnvPrefix + "ADMIN_AUTH_TOKEN_FILE"

// minStartupWindow is the least time the startupProbe gives a start: a
// broker restart, or Kafka starting with the pods, takes minutes.
const minStartupWindow = 5 * time.Minute

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("port %q: %v", s, err)
	}
	return n
}
