package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func inspect(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := runInspect(args, strings.NewReader(stdin), &out, &errb)
	return rc, out.String(), errb.String()
}

// A v9 SubscriptionInfo: shutdown requested, no endpoint, no tasks.
const v9Shutdown = "00000009000000091111111122223333444455555555555500000000000000000200000004"

func TestInspectSubscriptionForms(t *testing.T) {
	raw, _ := hex.DecodeString(v9Shutdown)
	file := filepath.Join(t.TempDir(), "sub.bin")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][2]string{
		"hex":        {v9Shutdown, ""},
		"hex spaced": {"0x" + v9Shutdown[:10] + " " + v9Shutdown[10:], ""},
		"base64":     {base64.StdEncoding.EncodeToString(raw), ""},
		"raw file":   {"@" + file, ""},
		"stdin hex":  {"@-", v9Shutdown + "\n"},
	} {
		t.Run(name, func(t *testing.T) {
			rc, out, errs := inspect(t, in[1], "subscription", in[0])
			if rc != 0 {
				t.Fatalf("rc %d: %s", rc, errs)
			}
			var got struct {
				Version   int32    `json:"version"`
				ErrorCode int32    `json:"errorCode"`
				ProcessID string   `json:"processId"`
				Notes     []string `json:"notes"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.Version != 9 || got.ErrorCode != 4 || got.ProcessID != "11111111-2222-3333-4444-555555555555" ||
				len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "shutdown") {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestInspectInvalidNamesOffset(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"subscription", v9Shutdown[:20]}, "processId at byte offset 8"},
		{[]string{"assignment", "0000000c"}, "version at byte offset 0"},
		{[]string{"consumer-subscription", "000300000001000174ffffffff"}, "ownedPartitions at byte offset 13"},
		// consumer assignment whose user data (at byte 10) is a truncated AssignmentInfo
		{[]string{"consumer-assignment", "0003" + "00000000" + "00000006" + "0000000b0000"}, "byte offset 14 of the input"},
		{[]string{"subscription", "zz!"}, "neither hex nor base64"},
		{[]string{"bogus", "00"}, "unknown kind"},
	} {
		rc, out, errs := inspect(t, "", tc.args...)
		if rc != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: rc %d out %q err %q, want exit 2 and %q", tc.args, rc, out, errs, tc.want)
		}
	}
	if rc, _, _ := inspect(t, "", "subscription"); rc != 2 {
		t.Errorf("missing input: rc %d", rc)
	}
}

func TestInspectConsumerSubscriptionNestsStreams(t *testing.T) {
	hexIn := "0000" + "00000001" + "000174" + "00000025" + v9Shutdown
	rc, out, errs := inspect(t, "", "consumer-subscription", hexIn)
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var got struct {
		Topics           []string `json:"topics"`
		SubscriptionInfo struct {
			ErrorCode int32 `json:"errorCode"`
		} `json:"subscriptionInfo"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Topics) != 1 || got.Topics[0] != "t" || got.SubscriptionInfo.ErrorCode != 4 {
		t.Fatalf("got %+v from %s", got, out)
	}
}

func TestInspectNotesFutureAndNamedTopology(t *testing.T) {
	rc, out, errs := inspect(t, "", "subscription", "0000000c0000000dffff")
	if rc != 0 || !strings.Contains(out, `"future": true`) || !strings.Contains(out, "only the header") {
		t.Fatalf("future: rc %d %s %s", rc, out, errs)
	}
	// v10, named topology task nt__0_0 (from the golden vectors).
	named := "0000000a0000000b11111111222233334444555555555555000000036" + "83a3100000002" +
		"0000000000000000fffffffffffffffe0002" + "6e74" + "00000001000000010000000000000007ffff" + "0300000000"
	rc, out, errs = inspect(t, "", "subscription", named)
	if rc != 0 || !strings.Contains(out, "nt__0_0") || !strings.Contains(out, "not supported by the streams protocol") {
		t.Fatalf("named: rc %d %s %s", rc, out, errs)
	}
}

// TestInspectCaptureLine: a capture line is checked against kmsg; a body
// that does not fit its API is refused.
func TestInspectCaptureLine(t *testing.T) {
	good := `{"type":"exchange","wall":"2026-01-01T00:00:00Z","monoNs":1,"apiKey":12,"apiName":"Heartbeat","apiVersion":4,"request":{"groupId":"g","generationId":3,"memberId":"m","groupInstanceId":null},"response":{"throttleTimeMs":0,"errorCode":27}}`
	var out, errOut bytes.Buffer
	if code := runInspect([]string{"line", good}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), `"groupId": "g"`) {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	bad := strings.Replace(good, `"generationId":3`, `"generationId":"x"`, 1)
	if code := runInspect([]string{"line", bad}, nil, &out, &errOut); code != 2 {
		t.Fatalf("exit %d for a body that does not fit", code)
	}
}
