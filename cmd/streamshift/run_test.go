package main

import (
	"io"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/streamshift/streamshift/config"
)

// TestProxyOptionsControlPlane: the control-plane credentials of the
// configuration reach the proxy's own upstream client, not only the
// coordinator's.
func TestProxyOptionsControlPlane(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		sasl bool
	}{
		{"none", nil, false},
		{"SCRAM-SHA-512", []string{"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=SCRAM-SHA-512",
			"STREAMSHIFT_CONTROL_PLANE_SASL_USERNAME=streamshift", "STREAMSHIFT_CONTROL_PLANE_SASL_PASSWORD=secret"}, true},
		{"PLAIN", []string{"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=PLAIN",
			"STREAMSHIFT_CONTROL_PLANE_SASL_USERNAME=streamshift", "STREAMSHIFT_CONTROL_PLANE_SASL_PASSWORD=secret"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := config.Load([]string{"--upstream", "127.0.0.1:1", "--listen", "127.0.0.1:19092"}, tc.env, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			opts := proxyOptions(cfg, zerolog.Nop(), nil)
			cl, err := kgo.NewClient(opts.ControlPlane...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			// Variadic options come back as one slice.
			mechs, _ := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
			if got := len(mechs) > 0; got != tc.sasl {
				t.Fatalf("proxy control-plane SASL mechanisms %v, want some: %v", mechs, tc.sasl)
			}
			if tc.sasl && mechs[0].Name() != cfg.ControlPlane.SASLMechanism {
				t.Fatalf("mechanism %s, want %s", mechs[0].Name(), cfg.ControlPlane.SASLMechanism)
			}
		})
	}
}
