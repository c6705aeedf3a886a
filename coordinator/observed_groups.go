package coordinator

import "sort"

// ObservedClassicGroups reports the groups this coordinator does not serve
// whose classic members it observes (classic on the broker, their requests
// forwarded through here: migration_observed.go), sorted; done is called
// once. The status page lists them from the first classic join.
func (c *Coordinator) ObservedClassicGroups(done func([]string)) {
	eachGroup(c, func(id string, s *groupQueue) (string, bool) {
		return id, s.group == nil && s.mig() != nil && s.mig().observed != nil && len(s.mig().observed.members) > 0
	}, func(out []string) {
		sort.Strings(out)
		done(out)
	})
}
