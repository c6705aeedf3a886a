package migration

import "testing"

func TestParseMigrationConfig(t *testing.T) {
	cfg, err := ParseMigrationConfig(map[string]string{
		"migration.policy":                   "Upgrade",
		"group.app-1.migration.policy":       "disabled",
		"streams.group.a.b.migration.policy": "downgrade",
		"session.timeout.ms":                 "45000",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		group            string
		want             MigrationPolicy
		upgrade, downgrd bool
	}{
		{"other", MigrationUpgrade, true, false},
		{"app-1", MigrationDisabled, false, false},
		{"a.b", MigrationDowngrade, false, true},
	} {
		p := cfg.PolicyFor(tc.group)
		if p != tc.want || p.AllowsUpgrade() != tc.upgrade || p.AllowsDowngrade() != tc.downgrd {
			t.Errorf("%s: %v (upgrade %v downgrade %v)", tc.group, p, p.AllowsUpgrade(), p.AllowsDowngrade())
		}
	}
	def, _ := ParseMigrationConfig(nil)
	if def.PolicyFor("x") != MigrationBidirectional || !def.PolicyFor("x").AllowsUpgrade() || !def.PolicyFor("x").AllowsDowngrade() {
		t.Errorf("default %v", def.PolicyFor("x"))
	}
	for _, bad := range []map[string]string{{"migration.policy": "sideways"}, {"group..migration.policy": "upgrade"}} {
		if _, err := ParseMigrationConfig(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
