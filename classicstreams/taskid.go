package classicstreams

import (
	"fmt"
	"strconv"
	"strings"
)

// TaskID is a Kafka Streams task: the subtopology (Kafka Streams' integer
// topic-group id, the node-group number of the topology) and the partition.
// NamedTopology is empty except for tasks of the internal named-topology
// feature, which the streams rebalance protocol does not support.
//
// The streams rebalance protocol (KIP-1071) names the same subtopology with
// the decimal string of that integer: the 4.x Java client registers
// String.valueOf(nodeGroupId) and parses it back with Integer.parseInt, so
// classic task 1_3 is streams task (subtopology "1", partition 3).
type TaskID struct {
	Subtopology   int32
	Partition     int32
	NamedTopology string
}

// String prints the task as Java's TaskId.toString does: "1_3", or
// "name__1_3" for a named topology.
func (t TaskID) String() string {
	s := strconv.FormatInt(int64(t.Subtopology), 10) + "_" + strconv.FormatInt(int64(t.Partition), 10)
	if t.NamedTopology != "" {
		return t.NamedTopology + "__" + s
	}
	return s
}

// SubtopologyID is the streams-protocol subtopology id of the task.
func (t TaskID) SubtopologyID() string { return strconv.FormatInt(int64(t.Subtopology), 10) }

// Less orders tasks by named topology, subtopology, then partition.
func (t TaskID) Less(o TaskID) bool {
	if t.NamedTopology != o.NamedTopology {
		return t.NamedTopology < o.NamedTopology
	}
	if t.Subtopology != o.Subtopology {
		return t.Subtopology < o.Subtopology
	}
	return t.Partition < o.Partition
}

// ParseTaskID reads what TaskID.String prints.
func ParseTaskID(s string) (TaskID, error) {
	var t TaskID
	rest := s
	if i := strings.LastIndex(s, "__"); i >= 0 {
		t.NamedTopology, rest = s[:i], s[i+2:]
		if t.NamedTopology == "" {
			return TaskID{}, fmt.Errorf("task id %q: empty named topology", s)
		}
	}
	sub, part, ok := strings.Cut(rest, "_")
	if !ok {
		return TaskID{}, fmt.Errorf("task id %q: want <subtopology>_<partition>", s)
	}
	g, err := strconv.ParseInt(sub, 10, 32)
	if err != nil {
		return TaskID{}, fmt.Errorf("task id %q: subtopology: %w", s, err)
	}
	p, err := strconv.ParseInt(part, 10, 32)
	if err != nil {
		return TaskID{}, fmt.Errorf("task id %q: partition: %w", s, err)
	}
	t.Subtopology, t.Partition = int32(g), int32(p)
	return t, nil
}

func (t TaskID) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

func (t *TaskID) UnmarshalText(b []byte) error { return unmarshalText(t, b, ParseTaskID) }

// TaskFromStreams converts a streams-protocol (subtopology id, partition) to
// a classic TaskID. The id must be the decimal form the Java client uses.
func TaskFromStreams(subtopologyID string, partition int32) (TaskID, error) {
	g, err := strconv.ParseInt(subtopologyID, 10, 32)
	if err != nil || strconv.FormatInt(g, 10) != subtopologyID {
		return TaskID{}, fmt.Errorf("subtopology id %q is not a classic Kafka Streams topic-group id", subtopologyID)
	}
	return TaskID{Subtopology: int32(g), Partition: partition}, nil
}

// TasksFromStreams flattens a streams-protocol task map (subtopology id to
// partitions, the shape of assignor.Tasks) into sorted classic task ids.
func TasksFromStreams(tasks map[string][]int32) ([]TaskID, error) {
	n := 0
	for _, ps := range tasks {
		n += len(ps)
	}
	out := make([]TaskID, 0, n)
	for sub, ps := range tasks {
		for _, p := range ps {
			t, err := TaskFromStreams(sub, p)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	sortTasks(out)
	return out, nil
}

// TasksToStreams groups classic task ids into a streams-protocol task map
// with sorted partitions. Named-topology tasks cannot be expressed and are
// an error.
func TasksToStreams(tasks []TaskID) (map[string][]int32, error) {
	out := make(map[string][]int32)
	for _, t := range tasks {
		if t.NamedTopology != "" {
			return nil, fmt.Errorf("task %s: named topologies are not supported by the streams protocol", t)
		}
		out[t.SubtopologyID()] = append(out[t.SubtopologyID()], t.Partition)
	}
	for _, ps := range out {
		sortInt32(ps)
	}
	return out, nil
}

// TopicPartition is a Kafka topic partition. It prints as Java's
// TopicPartition does ("topic-3").
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// Less is Kafka Streams' PARTITION_COMPARATOR: topic, then partition. Go's
// string order is byte order, which equals Java's String.compareTo for
// legal topic names (ASCII).
func (tp TopicPartition) Less(o TopicPartition) bool {
	if tp.Topic != o.Topic {
		return tp.Topic < o.Topic
	}
	return tp.Partition < o.Partition
}

func (tp TopicPartition) MarshalText() ([]byte, error) { return []byte(tp.String()), nil }

func (tp *TopicPartition) UnmarshalText(b []byte) error {
	s := string(b)
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return fmt.Errorf("topic partition %q: want <topic>-<partition>", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil {
		return fmt.Errorf("topic partition %q: %w", s, err)
	}
	*tp = TopicPartition{Topic: s[:i], Partition: int32(p)}
	return nil
}

// ProcessID is the UUID a Kafka Streams instance sends as its process id.
type ProcessID [16]byte

// String is the canonical UUID form, as java.util.UUID prints it; the
// streams protocol's ProcessId field carries exactly this string.
func (p ProcessID) String() string {
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range p {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hex[c>>4], hex[c&0xf]
		j += 2
	}
	return string(b[:])
}

// ParseProcessID reads the canonical UUID form.
func ParseProcessID(s string) (ProcessID, error) {
	var p ProcessID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return p, fmt.Errorf("process id %q: not a UUID", s)
	}
	j := 0
	for i := 0; i < 36; {
		if s[i] == '-' {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return ProcessID{}, fmt.Errorf("process id %q: not a UUID", s)
		}
		p[j] = hi<<4 | lo
		j++
		i += 2
	}
	return p, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func (p ProcessID) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

func (p *ProcessID) UnmarshalText(b []byte) error { return unmarshalText(p, b, ParseProcessID) }

// unmarshalText is the UnmarshalText of a type with a parser: *dst is set to
// parse(b), and left as it was when parse fails.
func unmarshalText[T any](dst *T, b []byte, parse func(string) (T, error)) error {
	v, err := parse(string(b))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}
