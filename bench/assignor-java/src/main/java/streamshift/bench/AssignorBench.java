package streamshift.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Runs Kafka's StickyTaskAssignor on an input written by the Go driver:
 *
 *   java -cp ... streamshift.bench.AssignorBench input.json output.json warmup iterations
 *
 * It prints one JSON line with the timings (nanoseconds per assignment) and
 * writes the last assignment to output.json, so that the driver computes
 * balance and stickiness with the same code for both assignors.
 */
public final class AssignorBench {

    /**
     * A member of the input: its record components are the assignor's view
     * of it (the metadata and the assignment state), the rest of both views
     * is empty, so one object serves GroupSpec for both.
     */
    record Member(String processId, Map<String, Set<Integer>> activeTasks, Map<String, Set<Integer>> standbyTasks,
                  Map<String, Map<Integer, Long>> taskOffsets) implements MemberAssignmentMetadata, MemberAssignmentState {
        @Override
        public Optional<String> instanceId() {
            return Optional.empty();
        }

        @Override
        public Optional<String> rackId() {
            return Optional.empty();
        }

        @Override
        public Map<String, String> clientTags() {
            return Map.of();
        }

        @Override
        public Map<String, Set<Integer>> warmupTasks() {
            return Map.of();
        }

        @Override
        public Map<String, Map<Integer, Long>> taskEndOffsets() {
            return Map.of();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: AssignorBench input.json output.json warmup iterations");
            System.exit(2);
        }
        final ObjectMapper mapper = new ObjectMapper();
        final JsonNode in = mapper.readTree(new File(args[0]));
        final int warmup = Integer.parseInt(args[2]);
        final int iterations = Integer.parseInt(args[3]);

        final Input input = parse(in);
        final GroupSpec spec = input.spec();
        final TopologyDescriber topology = input.topology();

        final StickyTaskAssignor assignor = new StickyTaskAssignor();
        GroupAssignment result = null;
        for (int i = 0; i < warmup; i++) {
            result = assignor.assign(spec, topology);
        }
        final long[] nanos = new long[iterations];
        final Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < iterations; i++) {
            final long start = System.nanoTime();
            result = assignor.assign(spec, topology);
            nanos[i] = System.nanoTime() - start;
        }

        // Retained size of one assignment result, measured after a GC.
        result = null;
        System.gc();
        final long before = rt.totalMemory() - rt.freeMemory();
        result = assignor.assign(spec, topology);
        System.gc();
        final long retained = rt.totalMemory() - rt.freeMemory() - before;

        mapper.writeValue(new File(args[1]), toJson(mapper, result));

        final long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        long sum = 0;
        for (long n : nanos) sum += n;
        final ObjectNode line = mapper.createObjectNode();
        line.put("java", System.getProperty("java.version"));
        line.put("iterations", iterations);
        line.put("medianNanos", sorted[sorted.length / 2]);
        line.put("meanNanos", sum / iterations);
        line.put("minNanos", sorted[0]);
        line.put("retainedBytes", retained);
        System.out.println(mapper.writeValueAsString(line));
    }

    record Input(GroupSpec spec, TopologyDescriber topology) {}

    /** Reads one assignment input written by the Go driver. */
    static Input parse(JsonNode in) {
        final int standbys = in.path("numStandbyReplicas").asInt(0);
        final List<String> subtopologies = new ArrayList<>();
        final Map<String, Integer> numTasks = new HashMap<>();
        final Map<String, Boolean> stateful = new HashMap<>();
        for (JsonNode s : in.path("subtopologies")) {
            subtopologies.add(s.get("id").asText());
            numTasks.put(s.get("id").asText(), s.get("numTasks").asInt());
            stateful.put(s.get("id").asText(), s.path("stateful").asBoolean(false));
        }
        final Map<String, Member> members = new LinkedHashMap<>();
        for (JsonNode m : in.path("members")) {
            members.put(m.get("memberId").asText(), new Member(
                m.get("processId").asText(), tasks(m.path("active")), tasks(m.path("standby")), offsets(m.path("taskOffsets"))));
        }

        final TopologyDescriber topology = new TopologyDescriber() {
            @Override
            public List<String> subtopologies() {
                return subtopologies;
            }

            @Override
            public int maxNumInputPartitions(String subtopologyId) {
                final Integer n = numTasks.get(subtopologyId);
                if (n == null) throw new NoSuchElementException(subtopologyId);
                return n;
            }

            @Override
            public boolean isStateful(String subtopologyId) {
                return stateful.getOrDefault(subtopologyId, false);
            }
        };
        final AssignmentConfigs configs = new AssignmentConfigs() {
            @Override
            public int numStandbyReplicas() {
                return standbys;
            }

            @Override
            public List<String> rackAwareAssignmentTags() {
                return List.of();
            }
        };
        final GroupSpec spec = new GroupSpec() {
            @Override
            public Collection<String> memberIds() {
                return members.keySet();
            }

            @Override
            public MemberAssignmentMetadata memberMetadata(String memberId) {
                return members.get(memberId);
            }

            @Override
            public MemberAssignmentState memberAssignmentState(String memberId) {
                return members.get(memberId);
            }

            @Override
            public AssignmentConfigs configs() {
                return configs;
            }
        };

        return new Input(spec, topology);
    }

    /** The assignment as JSON: member -> {active, standby}, sorted. */
    static ObjectNode toJson(ObjectMapper mapper, GroupAssignment result) {
        final ObjectNode out = mapper.createObjectNode();
        final ObjectNode outMembers = out.putObject("members");
        for (Map.Entry<String, MemberAssignment> e : new TreeMap<>(result.members()).entrySet()) {
            final ObjectNode m = outMembers.putObject(e.getKey());
            m.set("active", toJson(mapper, e.getValue().activeTasks()));
            m.set("standby", toJson(mapper, e.getValue().standbyTasks()));
        }
        return out;
    }

    private static Map<String, Set<Integer>> tasks(JsonNode node) {
        final Map<String, Set<Integer>> out = new HashMap<>();
        node.fields().forEachRemaining(e -> {
            final Set<Integer> parts = new HashSet<>();
            e.getValue().forEach(p -> parts.add(p.asInt()));
            out.put(e.getKey(), parts);
        });
        return out;
    }

    private static Map<String, Map<Integer, Long>> offsets(JsonNode node) {
        final Map<String, Map<Integer, Long>> out = new HashMap<>();
        node.fields().forEachRemaining(e -> {
            final Map<Integer, Long> parts = new HashMap<>();
            e.getValue().fields().forEachRemaining(p -> parts.put(Integer.parseInt(p.getKey()), p.getValue().asLong()));
            out.put(e.getKey(), parts);
        });
        return out;
    }

    private static ObjectNode toJson(ObjectMapper mapper, Map<String, Set<Integer>> tasks) {
        final ObjectNode node = mapper.createObjectNode();
        for (Map.Entry<String, Set<Integer>> e : new TreeMap<>(tasks).entrySet()) {
            final ArrayNode parts = node.putArray(e.getKey());
            e.getValue().stream().sorted().forEach(parts::add);
        }
        return node;
    }
}
