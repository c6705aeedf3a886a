package config

import (
	"io"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/migration"
)

func TestMigrationPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       Migration
		want    migration.MigrationPolicy
		groups  map[string]migration.MigrationPolicy
		wantErr bool
	}{
		{name: "default", m: DefaultMigration(), want: migration.MigrationBidirectional},
		{name: "empty is the default", m: Migration{}, want: migration.MigrationBidirectional},
		{name: "global", m: Migration{Policy: "Upgrade"}, want: migration.MigrationUpgrade},
		{name: "per group", m: Migration{Policy: "disabled", GroupPolicies: " orders=downgrade, billing=bidirectional "},
			want: migration.MigrationDisabled, groups: map[string]migration.MigrationPolicy{"orders": migration.MigrationDowngrade, "billing": migration.MigrationBidirectional}},
		{name: "bad global", m: Migration{Policy: "sideways"}, wantErr: true},
		{name: "bad pair", m: Migration{GroupPolicies: "orders"}, wantErr: true},
		{name: "bad group policy", m: Migration{GroupPolicies: "orders=maybe"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.m.TranslateConfig()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if cfg.Policy != tc.want {
				t.Errorf("policy = %v, want %v", cfg.Policy, tc.want)
			}
			for g, p := range tc.groups {
				if got := cfg.PolicyFor(g); got != p {
					t.Errorf("policy of %s = %v, want %v", g, got, p)
				}
			}
			if got := cfg.PolicyFor("other"); got != tc.want {
				t.Errorf("policy of an unlisted group = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoadMigration(t *testing.T) {
	cfg, _, err := Load([]string{"--upstream", "127.0.0.1:9092"}, []string{"STREAMSHIFT_MIGRATION_POLICY=upgrade", "STREAMSHIFT_MIGRATION_GROUP_POLICIES=app=disabled"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := cfg.Migration.TranslateConfig()
	if err != nil {
		t.Fatal(err)
	}
	if mc.Policy != migration.MigrationUpgrade || mc.PolicyFor("app") != migration.MigrationDisabled {
		t.Fatalf("migration = %+v", mc)
	}
	if _, _, err := Load([]string{"--upstream", "127.0.0.1:9092"}, []string{"STREAMSHIFT_MIGRATION_POLICY=nope"}, nil); err == nil {
		t.Fatal("a bad migration.policy loaded")
	}
}

// migration.disconnect.expiry.heartbeats: 3 unless set, 0 turns the
// expiry off, a negative count is refused.
func TestDisconnectExpiryHeartbeats(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
		err  string
	}{
		{"", 3, ""},
		{"0", 0, ""},
		{"5", 5, ""},
		{"-1", 0, "migration.disconnect.expiry.heartbeats -1 is negative"},
	} {
		env := []string{}
		if tc.env != "" {
			env = append(env, "STREAMSHIFT_MIGRATION_DISCONNECT_EXPIRY_HEARTBEATS="+tc.env)
		}
		cfg, _, err := Load([]string{"--upstream", "a:1"}, env, io.Discard)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("%q: error %v, want %q", tc.env, err, tc.err)
			}
		case err != nil:
			t.Fatalf("%q: %v", tc.env, err)
		case cfg.Migration.Disconnect.Expiry.Heartbeats != tc.want:
			t.Fatalf("%q: %d, want %d", tc.env, cfg.Migration.Disconnect.Expiry.Heartbeats, tc.want)
		}
	}
}
