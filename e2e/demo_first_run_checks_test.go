//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/status"
)

// demoInputCounts reads the demo's input topic from the start to its end
// offsets of now and counts its values, as CountApp counts them (it groups
// by value).
func demoInputCounts(ctx context.Context, bootstrap, topic string) (map[string]int64, int, error) {
	adm, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return nil, 0, err
	}
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, topic)
	adm.Close()
	if err != nil {
		return nil, 0, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	from := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			from[o.Partition] = kgo.NewOffset().AtStart()
			left[o.Partition] = o.Offset
		}
	})
	counts := map[string]int64{}
	if len(left) == 0 {
		return counts, 0, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	if err != nil {
		return nil, 0, err
	}
	defer cl.Close()
	n := 0
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("read %s to its end: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			counts[string(r.Value)]++
			n++
			if r.Offset == end-1 {
				delete(left, r.Partition)
			}
		})
	}
	return counts, n, nil
}

// verifyDemoOutput checks a CountApp's output against the demo's input: the
// count of every value in the input up to now is reached in the output (at
// least once: a rebalance may reprocess, nothing may be lost).
func verifyDemoOutput(ctx context.Context, t *testing.T, bootstrap, input, output, when string) {
	t.Helper()
	counts, n, err := demoInputCounts(ctx, bootstrap, input)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("%s: no input in %s", when, input)
	}
	col, err := harness.StartCollector(bootstrap, output, false)
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	if err := col.WaitCaughtUp(ctx, counts); err != nil {
		t.Fatalf("%s: output %s against %d input records: %v", when, output, n, err)
	}
	if errs := col.Errors(); len(errs) > 0 {
		t.Fatalf("%s: reading %s: %v", when, output, errs)
	}
	t.Logf("%s: output %s has the counts of all %d input records (%d values)", when, output, n, len(counts))
}

// demoTool runs one of Kafka's CLI tools against the demo and fails the
// test on an error exit or on any ERROR or Exception line in its output.
func demoTool(ctx context.Context, t *testing.T, dir, bootstrap, name string, args ...string) string {
	t.Helper()
	args = append([]string{"--bootstrap-server", bootstrap}, args...)
	out, err := harness.RunTool(ctx, dir, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "ERROR") || strings.Contains(line, "Exception") {
			t.Fatalf("%s %v printed an error line: %s\n%s", name, args, line, out)
		}
	}
	return out
}

// lagCell is a member's lag cell on /ui with a number in it.
var lagCell = regexp.MustCompile(`<td class="lag" data-lag="(\d+)"`)

// checkDemoStatusPage waits until /api/groups shows a numeric lag for a
// member of group speaking protocol (what it reports, against the
// changelogs' ends), then loads /ui in headless chromium: that member's lag
// cell has a number, its tasks are listed with theirs, and the page says
// what "–" means. The screenshot is kept in dir as ui-<name>.png.
func checkDemoStatusPage(ctx context.Context, t *testing.T, chromium, admin, group, protocol, dir, name string) {
	t.Helper()
	var member status.Member
	for member.Lag == nil {
		body, code, err := httpGet(ctx, "http://"+admin+"/api/groups/"+group)
		if err == nil && code == 200 {
			var g status.Group
			if err := json.Unmarshal(body, &g); err != nil {
				t.Fatalf("/api/groups/%s: %v\n%s", group, err, body)
			}
			for _, m := range g.Members {
				if m.Lag != nil && m.Protocol == protocol {
					member = m
				}
			}
		}
		if member.Lag != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s member of %s with a lag on /api/groups (last %d %v): %v", protocol, group, code, err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	url := "http://" + admin + "/ui"
	dom, err := chromiumDOM(ctx, chromium, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-group="` + group + `"`, `data-member="` + member.MemberID + `"`, `class="task" data-task="`, "stateless task: no changelog"} {
		if !strings.Contains(dom, want) {
			t.Fatalf("/ui's DOM lacks %s", want)
		}
	}
	row := regexp.MustCompile(`(?s)data-member="` + regexp.QuoteMeta(member.MemberID) + `" data-protocol="` + protocol + `">.*?</tr>`).FindString(dom)
	if !lagCell.MatchString(row) {
		t.Fatalf("/ui shows no numeric lag for %s member %s: %s", protocol, member.MemberID, row)
	}
	shot := filepath.Join(dir, "ui-"+name+".png")
	if err := chromiumScreenshot(ctx, chromium, url, shot); err != nil {
		t.Fatal(err)
	}
	t.Logf("status page checked in headless Chromium: member %s (%s) of %s lags %d (reported %s ago); screenshot %s",
		member.MemberID, member.Protocol, group, *member.Lag, member.LagAge, shot)
}
