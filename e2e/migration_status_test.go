//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/status"
)

// statusChecks checks streamshift's status page, its JSON and the group
// metrics at steps of the online migration: admin is the admin listener,
// proxy streamshift's bootstrap (for StreamsGroupDescribe), group the app's.
type statusChecks struct {
	chromium, admin, proxy, group string
	n                             int
	last                          []string // the member ids of the last check
}

// want is what a check expects of the group.
type statusWant struct {
	served           bool
	phase, phaseDone string // the migration phase kind, and its state
	classic, streams bool   // members of the protocol present
	// takeovers and handBacks are the done counters expected.
	takeovers, handBacks int
}

func (sc *statusChecks) step(name string, w statusWant) harness.Step {
	return harness.Step{Name: "status page, JSON and metrics " + name, Check: true, Do: func(ctx context.Context, r *harness.Run) error {
		sc.n++
		g, err := sc.checkAPI(ctx, w)
		if err != nil {
			return err
		}
		if err := sc.checkPage(ctx, r, name, g); err != nil {
			return err
		}
		if err := sc.checkMetrics(ctx, g, w); err != nil {
			return err
		}
		var ids []string
		for _, m := range g.Members {
			ids = append(ids, m.MemberID)
		}
		slices.Sort(ids)
		if sc.last != nil && w.served && slices.Equal(ids, sc.last) {
			return fmt.Errorf("the status page's members %v did not change since the last check", ids)
		}
		sc.last = ids
		r.T.Logf("status %s: served %v, phase %+v, %d members", name, g.Served, g.Migration, len(g.Members))
		return nil
	}}
}

// checkAPI reads /api/groups/{id} and, for a served group, compares it with
// StreamsGroupDescribe through streamshift: read describe, the API, describe
// again, until both describes agree (the group is settled between the steps,
// a retry only skips a heartbeat that changed it in between).
func (sc *statusChecks) checkAPI(ctx context.Context, w statusWant) (status.Group, error) {
	var g status.Group
	var last error
	for attempt := 0; attempt < 40; attempt++ {
		if attempt > 0 {
			time.Sleep(500 * time.Millisecond)
		}
		before, err := sc.describe(ctx)
		if err != nil {
			return g, err
		}
		body, code, err := httpGet(ctx, "http://"+sc.admin+"/api/groups/"+sc.group)
		if err != nil {
			return g, err
		}
		if code != http.StatusOK {
			return g, fmt.Errorf("/api/groups/%s: HTTP %d: %s", sc.group, code, body)
		}
		g = status.Group{}
		if err := json.Unmarshal(body, &g); err != nil {
			return g, fmt.Errorf("/api/groups/%s: %w", sc.group, err)
		}
		after, err := sc.describe(ctx)
		if err != nil {
			return g, err
		}
		if last = compareDescribed(g, before, after, w); last == nil {
			return g, nil
		}
	}
	return g, last
}

func compareDescribed(g status.Group, before, after kmsg.StreamsGroupDescribeResponseGroup, w statusWant) error {
	if g.Served != w.served {
		return fmt.Errorf("/api/groups: served %v, want %v", g.Served, w.served)
	}
	if g.Migration == nil || g.Migration.Kind != w.phase || g.Migration.State != w.phaseDone {
		return fmt.Errorf("/api/groups: migration %+v, want %s %s", g.Migration, w.phase, w.phaseDone)
	}
	if !w.served {
		// Handed back, the group may be listed again as the broker's
		// classic group streamshift observes: classic members only.
		if before.ErrorCode == 0 || g.Observed == "" && len(g.Members) != 0 {
			return fmt.Errorf("/api/groups: a group not served, but StreamsGroupDescribe error %d, %d members on the page", before.ErrorCode, len(g.Members))
		}
		for _, m := range g.Members {
			if m.Protocol != "classic" {
				return fmt.Errorf("/api/groups: the observed classic group lists member %s speaking %s", m.MemberID, m.Protocol)
			}
		}
		return nil
	}
	if before.ErrorCode != 0 || before.Epoch != after.Epoch || describedKey(before) != describedKey(after) {
		return fmt.Errorf("the group changed between two StreamsGroupDescribe (error %d, epochs %d %d)", before.ErrorCode, before.Epoch, after.Epoch)
	}
	if g.State != before.State || g.GroupEpoch != before.Epoch || g.AssignmentEpoch != before.AssignmentEpoch {
		return fmt.Errorf("/api/groups: state %s epoch %d assignment epoch %d; StreamsGroupDescribe: %s %d %d", g.State, g.GroupEpoch, g.AssignmentEpoch, before.State, before.Epoch, before.AssignmentEpoch)
	}
	var page []string
	protocols := map[string]bool{}
	for _, m := range g.Members {
		page = append(page, fmt.Sprintf("%s %s %d %s %v", m.MemberID, m.Protocol, m.MemberEpoch, m.ProcessID, m.Active))
		protocols[m.Protocol] = true
	}
	slices.Sort(page)
	if want := describedKey(before); strings.Join(page, "\n") != want {
		return fmt.Errorf("/api/groups members:\n%s\nStreamsGroupDescribe:\n%s", strings.Join(page, "\n"), want)
	}
	if protocols["classic"] != w.classic || protocols["streams"] != w.streams {
		return fmt.Errorf("/api/groups: members' protocols %v, want classic %v streams %v", protocols, w.classic, w.streams)
	}
	return nil
}

// describedKey lists the members as the status JSON names them.
func describedKey(d kmsg.StreamsGroupDescribeResponseGroup) string {
	var out []string
	for _, m := range d.Members {
		proto := "streams"
		if m.IsClassic {
			proto = "classic"
		}
		var active []string
		for _, t := range m.Assignment.ActiveTasks {
			for _, p := range t.Partitions {
				active = append(active, t.SubtopologyID+"_"+strconv.Itoa(int(p)))
			}
		}
		slices.Sort(active)
		if active == nil {
			active = []string{}
		}
		out = append(out, fmt.Sprintf("%s %s %d %s %v", m.MemberID, proto, m.MemberEpoch, m.ProcessID, active))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func (sc *statusChecks) describe(ctx context.Context) (kmsg.StreamsGroupDescribeResponseGroup, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(sc.proxy), kgo.ClientID("e2e-status-check"))
	if err != nil {
		return kmsg.StreamsGroupDescribeResponseGroup{}, err
	}
	defer cl.Close()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{sc.group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.StreamsGroupDescribeResponseGroup{}, fmt.Errorf("StreamsGroupDescribe through streamshift: %w", err)
	}
	if len(resp.Groups) != 1 {
		return kmsg.StreamsGroupDescribeResponseGroup{}, fmt.Errorf("StreamsGroupDescribe: %d groups", len(resp.Groups))
	}
	return resp.Groups[0], nil
}

// checkPage loads /ui in headless chromium: the group, its members with
// their protocols and the migration phase are in its DOM; a screenshot is
// saved in the test's folder.
func (sc *statusChecks) checkPage(ctx context.Context, r *harness.Run, name string, g status.Group) error {
	url := "http://" + sc.admin + "/ui"
	dom, err := chromiumDOM(ctx, sc.chromium, url)
	if err != nil {
		return err
	}
	wants := []string{`data-group="` + sc.group + `"`, `data-served="` + strconv.FormatBool(g.Served) + `"`,
		`data-phase="` + g.Migration.Kind + `" data-phase-state="` + g.Migration.State + `"`}
	for _, m := range g.Members {
		wants = append(wants, `data-member="`+m.MemberID+`" data-protocol="`+m.Protocol+`"`)
	}
	for _, want := range wants {
		if !strings.Contains(dom, want) {
			return fmt.Errorf("/ui's DOM lacks %s", want)
		}
	}
	// The group is captured, so it has a flight recorder, and the page's
	// link to it answers.
	if g.FlightRecorder == "" {
		return fmt.Errorf("/ui: no flight-recorder link for the captured group")
	}
	if body, code, err := httpGet(ctx, "http://"+sc.admin+g.FlightRecorder); err != nil || code != http.StatusOK || !strings.Contains(string(body), `"group":"`+sc.group+`"`) {
		return fmt.Errorf("%s: HTTP %d, %v", g.FlightRecorder, code, err)
	}
	shot := filepath.Join(r.Dir, fmt.Sprintf("ui-%d-%s.png", sc.n, strings.ReplaceAll(name, " ", "-")))
	return chromiumScreenshot(ctx, sc.chromium, url, shot)
}

// checkMetrics scrapes /metrics: the takeover and hand-back counters and the
// members-by-protocol gauge agree with the step.
func (sc *statusChecks) checkMetrics(ctx context.Context, g status.Group, w statusWant) error {
	body, code, err := httpGet(ctx, "http://"+sc.admin+"/metrics")
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("/metrics: HTTP %d: %v", code, err)
	}
	// The gauge counts the members streamshift serves: an observed classic
	// group's (handed back) are the broker's.
	byProto := map[string]float64{}
	for _, m := range g.Members {
		if g.Served {
			byProto[m.Protocol]++
		}
	}
	for series, want := range map[string]float64{
		`streamshift_migrations_total{kind="takeover",outcome="done"}`:  float64(w.takeovers),
		`streamshift_migrations_total{kind="hand-back",outcome="done"}`: float64(w.handBacks),
		`streamshift_migrations_running{kind="takeover"}`:               0,
		`streamshift_migrations_running{kind="hand-back"}`:              0,
		`streamshift_group_members{protocol="classic"}`:                 byProto["classic"],
		`streamshift_group_members{protocol="streams"}`:                 byProto["streams"],
	} {
		got, ok := metricValue(string(body), series)
		if !ok || got != want {
			return fmt.Errorf("/metrics: %s = %v (found %v), want %v", series, got, ok, want)
		}
	}
	return nil
}

// metricValue finds a series' value in Prometheus' text format.
func metricValue(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

func httpGet(ctx context.Context, url string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}
