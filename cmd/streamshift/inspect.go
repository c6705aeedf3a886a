package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/capture"
	"github.com/streamshift/streamshift/classicstreams"
)

const inspectUsage = `usage: streamshift inspect <kind> <hex | base64 | @file | @->

Decodes captured Kafka Streams rebalance metadata and prints it as JSON.

kinds:
  subscription            Kafka Streams SubscriptionInfo (JoinGroup user data, v1-v11; later versions: header only)
  assignment              Kafka Streams AssignmentInfo (SyncGroup user data, v1-v11)
  consumer-subscription   JoinGroup protocol metadata (ConsumerProtocolSubscription v0-v3) and the SubscriptionInfo inside
  consumer-assignment     SyncGroup member assignment (ConsumerProtocolAssignment v0-v3) and the AssignmentInfo inside
  line                    one capture line (JSON, as the argument or @file): checked against kmsg and printed indented

input: hex (spaces and a 0x prefix allowed), else standard or URL-safe base64;
@file reads a file (hex or base64 text, else raw bytes), @- reads standard input.

Exit status: 0 decoded, 2 usage or invalid input (the message names the byte
offset where decoding failed).
`

func inspectCmd(args []string) int {
	return runInspect(args, os.Stdin, os.Stdout, os.Stderr)
}

func runInspect(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, inspectUsage)
		return 0
	}
	if len(args) != 2 {
		fmt.Fprint(stderr, inspectUsage)
		return 2
	}
	kind := args[0]
	if kind == "line" {
		return inspectLine(args[1], stdin, stdout, stderr)
	}
	b, err := readInput(args[1], stdin)
	if err != nil {
		fmt.Fprintf(stderr, "streamshift inspect: %v\n", err)
		return 2
	}
	v, err := decodeKind(kind, b)
	if err != nil {
		fmt.Fprintf(stderr, "streamshift inspect: %v\n", err)
		return 2
	}
	return printJSON(stdout, stderr, v)
}

// Consumer-protocol envelopes are printed with the Streams payload they
// carry decoded next to the raw user data.
type inspectedSubscription struct {
	*classicstreams.ConsumerSubscription
	SubscriptionInfo *inspectedSubscriptionInfo `json:"subscriptionInfo,omitempty"`
}

// inspectedSubscriptionInfo adds notes on what a streams-protocol proxy
// cannot or must treat specially.
type inspectedSubscriptionInfo struct {
	*classicstreams.SubscriptionInfo
	Notes []string `json:"notes,omitempty"`
}

func noteSubscription(s *classicstreams.SubscriptionInfo) *inspectedSubscriptionInfo {
	out := &inspectedSubscriptionInfo{SubscriptionInfo: s}
	if s.Future {
		out.Notes = append(out.Notes, fmt.Sprintf("version %d is above %d: only the header was read", s.Version, classicstreams.LatestSupportedVersion))
	}
	if named := s.NamedTopologyTasks(); len(named) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("named-topology tasks %v: not supported by the streams protocol", named))
	}
	if s.ShutdownRequested() {
		out.Notes = append(out.Notes, "errorCode 4: the member requests an application shutdown")
	}
	return out
}

type inspectedAssignment struct {
	*classicstreams.ConsumerAssignment
	AssignmentInfo *classicstreams.AssignmentInfo `json:"assignmentInfo,omitempty"`
}

func decodeKind(kind string, b []byte) (any, error) {
	switch kind {
	case "subscription":
		s, err := classicstreams.DecodeSubscriptionInfo(b)
		if err != nil {
			return nil, err
		}
		return noteSubscription(s), nil
	case "assignment":
		return classicstreams.DecodeAssignmentInfo(b)
	case "consumer-subscription":
		s, err := classicstreams.DecodeConsumerSubscription(b)
		if err != nil {
			return nil, err
		}
		out := inspectedSubscription{ConsumerSubscription: s}
		if s.UserData != nil {
			info, err := classicstreams.DecodeSubscriptionInfo(s.UserData)
			if err != nil {
				return nil, userDataErr(err, s.UserDataOffset)
			}
			out.SubscriptionInfo = noteSubscription(info)
		}
		return out, nil
	case "consumer-assignment":
		a, err := classicstreams.DecodeConsumerAssignment(b)
		if err != nil {
			return nil, err
		}
		out := inspectedAssignment{ConsumerAssignment: a}
		if a.UserData != nil {
			if out.AssignmentInfo, err = classicstreams.DecodeAssignmentInfo(a.UserData); err != nil {
				return nil, userDataErr(err, a.UserDataOffset)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown kind %q (want subscription, assignment, consumer-subscription or consumer-assignment)", kind)
}

// userDataErr reports an error inside the user data at its offset in the
// whole input.
func userDataErr(err error, base int) error {
	var de *classicstreams.DecodeError
	if errors.As(err, &de) {
		return fmt.Errorf("user data at byte offset %d: decode %s: %s at byte offset %d of the input (%d of the user data): %w",
			base, de.Payload, de.Field, base+de.Offset, de.Offset, de.Err)
	}
	return fmt.Errorf("user data at byte offset %d: %w", base, err)
}

func readInput(arg string, stdin io.Reader) ([]byte, error) {
	if raw, isFile, err := readArg(arg, stdin); isFile {
		if err != nil {
			return nil, err
		}
		if b, err := parseText(string(raw)); err == nil {
			return b, nil
		}
		return raw, nil
	}
	b, err := parseText(arg)
	if err != nil {
		return nil, fmt.Errorf("input is neither hex nor base64")
	}
	return b, nil
}

// readArg is an argument's text, or with @file the file's bytes (@- stdin);
// isFile says which.
func readArg(arg string, stdin io.Reader) (raw []byte, isFile bool, err error) {
	name, ok := strings.CutPrefix(arg, "@")
	switch {
	case !ok:
		return []byte(arg), false, nil
	case name == "-":
		raw, err = io.ReadAll(stdin)
	default:
		raw, err = os.ReadFile(name)
	}
	return raw, true, err
}

// printJSON prints v indented; the result is inspect's exit code.
func printJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "streamshift inspect: %v\n", err)
		return 1
	}
	return 0
}

// parseText reads hex first (it is also valid base64 at times), then base64.
func parseText(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	h := strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")), "")
	if b, err := hex.DecodeString(h); err == nil && len(h) > 0 {
		return b, nil
	}
	compact := strings.Join(strings.Fields(s), "")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(compact); err == nil && len(compact) > 0 && !bytes.ContainsRune([]byte(compact), ' ') {
			return b, nil
		}
	}
	return nil, errors.New("not hex or base64")
}

// inspectLine checks one capture line: its bodies decode into the kmsg
// request and response of its API and version.
func inspectLine(arg string, stdin io.Reader, stdout, stderr io.Writer) int {
	raw, _, err := readArg(arg, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "streamshift inspect: %v\n", err)
		return 2
	}
	var l capture.Line
	if err := json.Unmarshal(bytes.TrimSpace(raw), &l); err != nil {
		fmt.Fprintf(stderr, "streamshift inspect: not a capture line: %v\n", err)
		return 2
	}
	if l.Type == "exchange" && l.APIKey != nil {
		for _, body := range []struct {
			data json.RawMessage
			msg  kmsg.Request
			resp kmsg.Response
		}{{data: l.Request, msg: kmsg.RequestForKey(*l.APIKey)}, {data: l.Response, resp: kmsg.ResponseForKey(*l.APIKey)}} {
			var dst any = body.msg
			if body.msg == nil {
				dst = body.resp
			}
			if len(body.data) == 0 || dst == nil {
				continue
			}
			if err := capture.DecodeBody(body.data, dst); err != nil {
				fmt.Fprintf(stderr, "streamshift inspect: %s v%d: %v\n", l.APIName, l.APIVersion, err)
				return 2
			}
		}
	}
	return printJSON(stdout, stderr, l)
}
