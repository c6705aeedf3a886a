package capture

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A Kafka Streams instance's consumer as the wire shows it: classic
// JoinGroup and SyncGroup from its client address, then, rolled to the
// streams protocol, StreamsGroupHeartbeats with its process id and
// application.server endpoint.
const (
	procA   = "1b2c3d4e-0000-4000-8000-00000000000a"
	procB   = "9f8e7d6c-0000-4000-8000-00000000000b"
	clientA = "wordcount-" + procA + "-StreamThread-1-consumer"
	clientB = "wordcount-" + procB + "-StreamThread-2-consumer"
)

func exchangeLine(t *testing.T, t0 time.Time, ms int, client, addr, api string, key int16, req, resp map[string]any) Line {
	t.Helper()
	rq, _ := json.Marshal(req)
	rs, _ := json.Marshal(resp)
	return Line{Type: "exchange", Wall: t0.Add(time.Duration(ms) * time.Millisecond), ClientID: client, ClientAddress: addr,
		APIKey: &key, APIName: api, Groups: []string{"g"}, Request: rq, Response: rs}
}

func labelsCapture(t *testing.T) []Line {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sync := func(ms int, client, addr, member string, tasks ...string) Line {
		return exchangeLine(t, t0, ms, client, addr, "SyncGroup", 14,
			map[string]any{"groupId": "g", "memberId": member, "generationId": 1},
			map[string]any{"assignmentDecoded": map[string]any{"assignmentInfo": map[string]any{"activeTasks": tasks}}})
	}
	hb := func(ms int, client, addr, member, pid, host string, tasks ...int) Line {
		return exchangeLine(t, t0, ms, client, addr, "StreamsGroupHeartbeat", 88,
			map[string]any{"groupId": "g", "memberId": member, "memberEpoch": 0, "processId": pid, "userEndpoint": map[string]any{"host": host, "port": 8080}},
			map[string]any{"memberId": member, "memberEpoch": 2, "activeTasks": []map[string]any{{"subtopologyId": "0", "partitions": tasks}}})
	}
	return []Line{
		exchangeLine(t, t0, 0, clientA, "10.0.0.7:51000", "JoinGroup", 11, map[string]any{"groupId": "g", "memberId": ""}, map[string]any{"memberId": "classic-a", "generationId": 1}),
		sync(10, clientA, "10.0.0.7:51000", "classic-a", "0_0"),
		exchangeLine(t, t0, 20, clientB, "10.0.0.8:52000", "JoinGroup", 11, map[string]any{"groupId": "g", "memberId": ""}, map[string]any{"memberId": "classic-b", "generationId": 1}),
		sync(30, clientB, "10.0.0.8:52000", "classic-b", "0_1"),
		// A rolled to streams (same process, same client id): its
		// endpoint names its host.
		hb(5000, clientA, "10.0.0.7:51500", "streams-a", procA, "app-1", 0),
	}
}

// Each member is shown by its host, its process id's first 8 characters
// and its thread, the same across its switch to the streams protocol; its
// client id and member ids are a hover away; a names file puts an
// operator's names on instances.
func TestTimelineLabels(t *testing.T) {
	tl := BuildTimeline(labelsCapture(t), "g")
	labels := map[string]string{}
	for _, ln := range tl.Lanes {
		labels[ln.ClientID] = ln.Label
	}
	if want := "app-1/1b2c3d4e thread 1"; labels[clientA] != want {
		t.Errorf("instance A (classic, then streams with endpoint app-1) is %q, want %q", labels[clientA], want)
	}
	if want := "10.0.0.8/9f8e7d6c thread 2"; labels[clientB] != want {
		t.Errorf("instance B (classic, no endpoint) is %q, want %q", labels[clientB], want)
	}
	var text, page strings.Builder
	tl.WriteText(&text)
	for _, want := range []string{"  app-1/1b2c3d4e thread 1  (classic from +0s, streams from +5s)", "client id: " + clientA, "0_1: 0 owner changes: 10.0.0.8/9f8e7d6c thread 2 +30ms.."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := tl.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-member="` + clientA + `"`, `>app-1/1b2c3d4e thread 1</div>`, "member ids classic-a streams-a"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}

	names, err := ReadNames("names.txt", strings.NewReader("# instances of the demo\n"+procA+"=orders-east\n10.0.0.8: orders-west\n"))
	if err != nil {
		t.Fatal(err)
	}
	tl.SetNames(names)
	text.Reset()
	tl.WriteText(&text)
	for _, want := range []string{"  orders-east thread 1  (", "  orders-west thread 2  (", "0_0: 0 owner changes: orders-east thread 1 +10ms.."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("with names, text lacks %q:\n%s", want, text.String())
		}
	}
	if _, err := ReadNames("bad.txt", strings.NewReader("just-a-word\n")); err == nil || !strings.Contains(err.Error(), "bad.txt:1") {
		t.Errorf("a line without key=name: %v, want an error naming it", err)
	}
}

// A streams member whose client id is no Kafka Streams thread's is named
// by the process id it sends: the same instance as its classic lane.
func TestTimelineLabelFromProcessID(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := []Line{exchangeLine(t, t0, 0, "custom-client", "10.0.0.9:1234", "StreamsGroupHeartbeat", 88,
		map[string]any{"groupId": "g", "memberId": "m", "memberEpoch": 0, "processId": procB},
		map[string]any{"memberId": "m", "memberEpoch": 1, "activeTasks": []map[string]any{}})}
	tl := BuildTimeline(lines, "g")
	if len(tl.Lanes) != 1 || tl.Lanes[0].Label != "10.0.0.9/9f8e7d6c" {
		t.Fatalf("lanes %+v, want one labelled 10.0.0.9/9f8e7d6c", tl.Lanes)
	}
}
