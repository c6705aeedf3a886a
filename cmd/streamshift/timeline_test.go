package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --names puts an operator's name on an instance, by its process id, in
// the text and in --json; a names file it cannot read is a usage error.
func TestTimelineNamesFlag(t *testing.T) {
	dir := t.TempDir()
	capFile, namesFile := filepath.Join(dir, "capture.jsonl"), filepath.Join(dir, "names.txt")
	line := `{"type":"exchange","wall":"2026-01-01T00:00:00Z","clientId":"wordcount-1b2c3d4e-0000-4000-8000-00000000000a-StreamThread-1-consumer",` +
		`"clientAddress":"10.0.0.7:51000","apiKey":88,"apiName":"StreamsGroupHeartbeat","groups":["g"],` +
		`"request":{"groupId":"g","memberId":"m","memberEpoch":0,"processId":"1b2c3d4e-0000-4000-8000-00000000000a"},` +
		`"response":{"memberId":"m","memberEpoch":1,"activeTasks":[{"subtopologyId":"0","partitions":[0]}]}}` + "\n"
	if err := os.WriteFile(capFile, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(namesFile, []byte("1b2c3d4e=orders-east\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if rc := runTimeline([]string{capFile, "--group", "g", "--names", namesFile}, &out, &errs); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs.String())
	}
	if !strings.Contains(out.String(), "  orders-east thread 1  (streams from +0s)") {
		t.Errorf("the named instance is not shown:\n%s", out.String())
	}
	out.Reset()
	if rc := runTimeline([]string{capFile, "--json", "--names", namesFile}, &out, &errs); rc != 0 {
		t.Fatalf("--json: exit %d: %s", rc, errs.String())
	}
	var doc struct {
		Members []struct{ Label, ClientID string }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Members) != 1 || doc.Members[0].Label != "orders-east thread 1" {
		t.Errorf("--json: %v, %+v; want one member labelled orders-east thread 1:\n%s", err, doc, out.String())
	}
	if err := os.WriteFile(namesFile, []byte("no name here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rc := runTimeline([]string{capFile, "--names", namesFile}, &out, &errs); rc != 2 || !strings.Contains(errs.String(), "names.txt:1") {
		t.Errorf("a bad names file: exit %d, %q; want 2 naming its line", rc, errs.String())
	}
}
