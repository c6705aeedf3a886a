package io.streamshift.vectors;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.StreamsAssignmentProtocolVersions;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;
import org.apache.kafka.streams.state.HostInfo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Golden vectors for streamshift's classicstreams package, made by the real
 * Kafka Streams and consumer classes of the kafka-streams jar on the class path.
 *
 * <pre>
 * generate DIR   write one JSON file per vector into DIR
 * decode         read lines "KIND HEX" from stdin; print, per line, the JSON
 *                description of what the real Java decoder makes of the bytes,
 *                or {"error": "..."}; KIND is subscription, assignment,
 *                consumer-subscription or consumer-assignment
 * </pre>
 *
 * The descriptions use the JSON field names of the Go types, so the Go tests
 * unmarshal them directly. Every description is made from the bytes decoded
 * again by Java, i.e. it is what a Kafka Streams client would see.
 *
 * <p>One source for kafka-streams 2.8 to 4.4: each jar writes the versions it
 * knows (its {@code LATEST_SUPPORTED_VERSION}, the consumer protocol's highest
 * version), and what changed shape between releases is reached by
 * reflection: the SubscriptionInfo constructor (a UUID process id before 3.8,
 * {@code ProcessId} after; client tags from 3.1), named-topology TaskIds
 * (3.0+), the consumer Subscription's generation and rack (3.4/3.5+).
 */
public final class Vectors {

    private static final UUID PID = UUID.fromString("11111111-2222-3333-4444-555555555555");
    private static final String R = "app-rep-0000000003-repartition";
    private static final String INPUT = "input";

    /** What this jar writes: SubscriptionInfo/AssignmentInfo up to LATEST (9 in 2.8, 11 from 3.1). */
    private static final int LATEST = StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION;
    /** Named-topology task ids exist on the wire from v10 (StreamsAssignmentProtocolVersions.MIN_NAMED_TOPOLOGY_VERSION, 3.0+). */
    private static final int MIN_NAMED_TOPOLOGY = 10;
    /** Client tags exist on the wire from v11. */
    private static final int MIN_CLIENT_TAGS = 11;
    private static final short CONSUMER_SUBSCRIPTION_MAX = ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION;
    private static final short CONSUMER_ASSIGNMENT_MAX = ConsumerProtocolAssignment.HIGHEST_SUPPORTED_VERSION;

    public static void main(final String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("generate")) {
            generate(Path.of(args[1]));
        } else if (args.length == 1 && args[0].equals("decode")) {
            decodeLines();
        } else if (args.length == 1 && args[0].equals("version")) {
            System.out.println(producer());
        } else {
            System.err.println("usage: Vectors generate DIR | decode | version");
            System.exit(2);
        }
    }

    private static String producer() {
        // Every kafka-streams jar carries its version in this resource.
        final java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = SubscriptionInfo.class.getResourceAsStream("/kafka/kafka-streams-version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (final IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return "kafka-streams " + p.getProperty("version", "unknown");
    }

    // ---------------------------------------------------------------- decode

    private static void decodeLines() throws IOException {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            final String[] parts = line.split("\\s+");
            try {
                if (parts.length != 2) {
                    throw new IllegalArgumentException("want KIND HEX");
                }
                out.println(describe(parts[0], unhex(parts[1])).toString());
            } catch (final Exception e) {
                out.println(new Json().put("error", e.getClass().getSimpleName() + ": " + e.getMessage()));
            }
        }
    }

    private static Json describe(final String kind, final byte[] bytes) throws Exception {
        switch (kind) {
            case "subscription":
                return describeSubscriptionInfo(SubscriptionInfo.decode(ByteBuffer.wrap(bytes)));
            case "assignment":
                return describeAssignmentInfo(AssignmentInfo.decode(ByteBuffer.wrap(bytes)));
            case "consumer-subscription":
                return describeConsumerSubscription(bytes);
            case "consumer-assignment":
                return describeConsumerAssignment(bytes);
            default:
                throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    // -------------------------------------------------------------- generate

    private static final class Vector {
        final String name;
        final String kind;
        final String comment;
        final byte[] bytes;

        Vector(final String name, final String kind, final String comment, final byte[] bytes) {
            this.name = name;
            this.kind = kind;
            this.comment = comment;
            this.bytes = bytes;
        }
    }

    private static void generate(final Path dir) throws Exception {
        Files.createDirectories(dir);
        final List<Vector> vs = new ArrayList<>();
        subscriptionInfoVectors(vs);
        assignmentInfoVectors(vs);
        consumerProtocolVectors(vs);
        for (final Vector v : vs) {
            final Json j = new Json()
                .put("name", v.name)
                .put("kind", v.kind)
                .put("producer", producer())
                .put("comment", v.comment)
                .put("hex", hex(v.bytes))
                .put("value", describe(v.kind, v.bytes));
            Files.writeString(dir.resolve(v.name + ".json"), j.pretty() + "\n", StandardCharsets.UTF_8);
        }
        System.err.println("wrote " + vs.size() + " vectors to " + dir + " (" + producer() + ")");
    }

    private static Map<TaskId, Long> sums() {
        final Map<TaskId, Long> m = new HashMap<>();
        m.put(new TaskId(0, 0), -2L);
        m.put(new TaskId(0, 1), 100L);
        m.put(new TaskId(1, 0), -2L);
        m.put(new TaskId(1, 2), 5000L);
        m.put(new TaskId(2, 7), Long.MAX_VALUE);
        return m;
    }

    private static Map<String, String> tags() {
        final Map<String, String> m = new HashMap<>();
        m.put("az", "a");
        m.put("rack", "r1");
        return m;
    }

    private static byte[] bytes(final ByteBuffer b) {
        final ByteBuffer d = b.duplicate();
        d.rewind();
        final byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    private static byte[] subscriptionInfo(final int version, final int latest, final String endpoint,
                                           final Map<TaskId, Long> sums, final byte unique, final int errorCode,
                                           final Map<String, String> tags) {
        return bytes(newSubscriptionInfo(version, latest, endpoint, sums, unique, errorCode, tags).encode());
    }

    /**
     * The public SubscriptionInfo constructor of this jar: (version, latest,
     * UUID|ProcessId, endpoint, offset sums, uniqueField, errorCode[, client tags]).
     */
    private static SubscriptionInfo newSubscriptionInfo(final int version, final int latest, final String endpoint,
                                                        final Map<TaskId, Long> sums, final byte unique, final int errorCode,
                                                        final Map<String, String> tags) {
        for (final Constructor<?> c : SubscriptionInfo.class.getConstructors()) {
            final Class<?>[] p = c.getParameterTypes();
            if (p.length < 7 || p[0] != int.class || p[1] != int.class) {
                continue;
            }
            try {
                final Object pid = p[2] == UUID.class ? PID : p[2].getConstructor(UUID.class).newInstance(PID);
                final Object[] args = p.length == 8
                    ? new Object[] {version, latest, pid, endpoint, sums, unique, errorCode, tags}
                    : new Object[] {version, latest, pid, endpoint, sums, unique, errorCode};
                return (SubscriptionInfo) c.newInstance(args);
            } catch (final InvocationTargetException e) {
                throw new IllegalStateException("SubscriptionInfo v" + version + ": " + e.getCause(), e.getCause());
            } catch (final ReflectiveOperationException e) {
                throw new IllegalStateException("SubscriptionInfo constructor " + c, e);
            }
        }
        throw new IllegalStateException("no known SubscriptionInfo constructor in " + producer());
    }

    /** TaskId of a named topology (the three-argument constructor, 3.0+). */
    private static TaskId namedTask(final int subtopology, final int partition, final String topology) {
        try {
            return TaskId.class.getConstructor(int.class, int.class, String.class).newInstance(subtopology, partition, topology);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("named-topology TaskId in " + producer(), e);
        }
    }

    /** A consumer Subscription with generation and rack where this client has them (3.4+/3.5+). */
    private static Subscription newSubscription(final List<String> topics, final ByteBuffer userData,
                                                final List<TopicPartition> owned, final int generation,
                                                final Optional<String> rack) {
        try {
            return Subscription.class.getConstructor(List.class, ByteBuffer.class, List.class, int.class, Optional.class)
                .newInstance(topics, userData, owned, generation, rack);
        } catch (final NoSuchMethodException e) {
            return new Subscription(topics, userData, owned);
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("consumer Subscription", e);
        }
    }

    /** An accessor that not every release has; absent gives dflt. */
    @SuppressWarnings("unchecked")
    private static <T> T optionalAccessor(final Object o, final String name, final T dflt) {
        try {
            return (T) o.getClass().getMethod(name).invoke(o);
        } catch (final NoSuchMethodException e) {
            return dflt;
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(name + "()", e);
        }
    }

    private static void subscriptionInfoVectors(final List<Vector> vs) {
        for (int v = 1; v <= LATEST; v++) {
            final int latest = v <= 2 ? -1 : LATEST;
            vs.add(new Vector(String.format("subscription-info-v%02d", v), "subscription",
                "endpoint localhost:8080, offset sums {0_0:-2, 0_1:100, 1_0:-2, 1_2:5000, 2_7:MAX} "
                    + "(v1-6: prev/standby split), uniqueField 1, errorCode 0, tags {az:a, rack:r1}",
                subscriptionInfo(v, latest, "localhost:8080", sums(), (byte) 1, 0, tags())));
        }
        vs.add(new Vector("subscription-info-v02-no-endpoint", "subscription", "v2 without application.server",
            subscriptionInfo(2, -1, null, sums(), (byte) 0, 0, Map.of())));
        vs.add(new Vector("subscription-info-v05-pinned", "subscription", "v5 member whose latest supported version is " + LATEST + " (upgrade.from)",
            subscriptionInfo(5, LATEST, "localhost:8080", sums(), (byte) 0, 0, Map.of())));
        vs.add(new Vector("subscription-info-v09-shutdown", "subscription", "v9, no endpoint, no tasks, uniqueField 2, errorCode 4 (SHUTDOWN_REQUESTED)",
            subscriptionInfo(9, 9, null, Map.of(), (byte) 2, 4, Map.of())));
        if (LATEST >= MIN_CLIENT_TAGS) {
            vs.add(new Vector("subscription-info-v11-empty", "subscription", "v11 with nothing: no endpoint, tasks, tags",
                subscriptionInfo(11, 11, null, Map.of(), (byte) 0, 0, Map.of())));
        }
        if (LATEST >= MIN_NAMED_TOPOLOGY) {
            final Map<TaskId, Long> named = new HashMap<>();
            named.put(namedTask(0, 0, "nt"), -2L);
            named.put(new TaskId(1, 1), 7L);
            vs.add(new Vector("subscription-info-v10-named-topology", "subscription", "v10 with a task of named topology nt",
                subscriptionInfo(10, LATEST, "h:1", named, (byte) 3, 0, Map.of())));
            if (LATEST >= MIN_CLIENT_TAGS) {
                vs.add(new Vector("subscription-info-v11-named-topology", "subscription", "v11 with a task of named topology nt",
                    subscriptionInfo(11, 11, "h:1", named, (byte) 3, 0, tags())));
            }
        }
        // A member from the future: Java cannot encode it, so the header is
        // written by hand, followed by bytes no reader may look at.
        final ByteBuffer future = ByteBuffer.allocate(8 + 5);
        future.putInt(12).putInt(13).put(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01});
        vs.add(new Vector("subscription-info-v12-future", "subscription",
            "version 12 / latest supported 13, then junk: only the header is read", future.array()));
    }

    private static Set<TopicPartition> tps(final TopicPartition... ps) {
        return new HashSet<>(List.of(ps));
    }

    private static byte[] assignmentInfo(final int version, final int commonly, final List<TaskId> active,
                                         final Map<TaskId, Set<TopicPartition>> standby,
                                         final Map<HostInfo, Set<TopicPartition>> hosts,
                                         final Map<HostInfo, Set<TopicPartition>> standbyHosts,
                                         final int errCode, final Long nextRebalanceMs) {
        final AssignmentInfo a = new AssignmentInfo(version, commonly, active, standby, hosts, standbyHosts, errCode);
        if (nextRebalanceMs != null) {
            a.setNextRebalanceTime(nextRebalanceMs);
        }
        return bytes(a.encode());
    }

    private static void assignmentInfoVectors(final List<Vector> vs) {
        // This consumer holds R-0, input-0, input-1; sorted, R < input, so
        // the aligned active list is [1_0, 0_0, 0_1].
        final List<TaskId> active = List.of(new TaskId(1, 0), new TaskId(0, 0), new TaskId(0, 1));
        final Map<TaskId, Set<TopicPartition>> standby = new HashMap<>();
        standby.put(new TaskId(1, 1), tps(new TopicPartition(R, 1)));
        standby.put(new TaskId(0, 2), tps(new TopicPartition(INPUT, 2), new TopicPartition(R + "-b", 2)));
        final Map<HostInfo, Set<TopicPartition>> hosts = new HashMap<>();
        hosts.put(new HostInfo("localhost", 8080), tps(new TopicPartition(R, 0), new TopicPartition(INPUT, 0), new TopicPartition(INPUT, 1)));
        hosts.put(new HostInfo("otherhost", 9090), tps());
        hosts.put(new HostInfo("thirdhost", 7070), tps(new TopicPartition(R, 1), new TopicPartition(INPUT, 2)));
        final Map<HostInfo, Set<TopicPartition>> standbyHosts = new HashMap<>();
        standbyHosts.put(new HostInfo("localhost", 8080), tps(new TopicPartition(R, 1), new TopicPartition(INPUT, 2)));
        standbyHosts.put(new HostInfo("thirdhost", 7070), tps(new TopicPartition(R + "-b", 0)));
        for (int v = 1; v <= LATEST; v++) {
            vs.add(new Vector(String.format("assignment-info-v%02d", v), "assignment",
                "active [1_0, 0_0, 0_1], standby {1_1: R-1, 0_2: input-2 R-b-2}, three hosts (one empty), "
                    + "standby host map (v6+), commonly " + LATEST + " (v3+), errCode 0 (v4+), nextRebalanceMs 1700000000000 (v7+)",
                assignmentInfo(v, LATEST, active, standby, hosts, standbyHosts, 0, 1_700_000_000_000L)));
        }
        final String vl = String.format("v%02d", LATEST);
        vs.add(new Vector("assignment-info-" + vl + "-empty-now", "assignment", "v" + LATEST + ", nothing assigned, nextRebalanceMs 0 (rebalance now)",
            assignmentInfo(LATEST, LATEST, List.of(), Map.of(), Map.of(), Map.of(), 0, 0L)));
        vs.add(new Vector("assignment-info-" + vl + "-shutdown", "assignment", "v" + LATEST + " error assignment SHUTDOWN_REQUESTED (4)",
            assignmentInfo(LATEST, LATEST, List.of(), Map.of(), Map.of(), Map.of(), 4, null)));
        vs.add(new Vector("assignment-info-v04-incomplete-metadata", "assignment", "v4 error INCOMPLETE_SOURCE_TOPIC_METADATA (1)",
            assignmentInfo(4, 4, List.of(), Map.of(), Map.of(), Map.of(), 1, null)));
        final int older = LATEST - 1;
        vs.add(new Vector(String.format("assignment-info-v%02d-commonly-%d", older, LATEST), "assignment",
            "the classic leader's reply to a v" + older + " member in a v" + LATEST + " group",
            assignmentInfo(older, LATEST, List.of(), Map.of(), Map.of(), Map.of(), 0, null)));
        vs.add(new Vector("assignment-info-" + vl + "-future-reply", "assignment",
            "what a member from the future gets: v" + LATEST + ", commonly " + LATEST + ", empty",
            bytes(new AssignmentInfo(LATEST, LATEST).encode())));
        if (LATEST >= MIN_NAMED_TOPOLOGY) {
            final Map<TaskId, Set<TopicPartition>> namedStandby = new HashMap<>();
            namedStandby.put(namedTask(2, 3, "nt"), tps(new TopicPartition("nt-in", 3)));
            vs.add(new Vector("assignment-info-" + vl + "-named-topology", "assignment", "v" + LATEST + " with named-topology tasks (UTF-16 names)",
                assignmentInfo(LATEST, LATEST, List.of(namedTask(0, 0, "nt"), new TaskId(0, 1)), namedStandby, Map.of(), Map.of(), 0, null)));
        }
        final Map<HostInfo, Set<TopicPartition>> many = new HashMap<>();
        for (int h = 0; h < 5; h++) {
            final Set<TopicPartition> s = new HashSet<>();
            for (int t = 0; t < 7; t++) {
                s.add(new TopicPartition("topic-" + t, h));
            }
            many.put(new HostInfo("host" + h + ".example", 8000 + h), s);
        }
        vs.add(new Vector("assignment-info-v06-many-topics", "assignment", "v6, five hosts over seven topics: dictionary in hash order",
            assignmentInfo(6, LATEST, List.of(), Map.of(), many, many, 0, null)));
    }

    private static void consumerProtocolVectors(final List<Vector> vs) {
        final byte[] sub = subscriptionInfo(LATEST, LATEST, "localhost:8080", sums(), (byte) 1, 0, tags());
        final List<TopicPartition> owned = List.of(new TopicPartition(INPUT, 0), new TopicPartition(INPUT, 1), new TopicPartition(R, 0));
        for (short v = 0; v <= CONSUMER_SUBSCRIPTION_MAX; v++) {
            final Subscription s = newSubscription(List.of(INPUT, R), ByteBuffer.wrap(sub), owned, 5, Optional.of("rack-a"));
            vs.add(new Vector(String.format("consumer-subscription-v%d", v), "consumer-subscription",
                "topics [input, R], userData = subscription-info-v" + LATEST + ", owned input-0 input-1 R-0 (v1+), generation 5 (v2+), rack rack-a (v3+)",
                bytes(ConsumerProtocol.serializeSubscription(s, v))));
        }
        final short cs = CONSUMER_SUBSCRIPTION_MAX;
        vs.add(new Vector("consumer-subscription-v" + cs + "-bare", "consumer-subscription",
            "v" + cs + ", one topic, null userData, nothing owned, generation -1, no rack",
            bytes(ConsumerProtocol.serializeSubscription(newSubscription(List.of("t"), null, List.of(), -1, Optional.empty()), cs))));
        final byte[] asg = assignmentInfo(LATEST, LATEST, List.of(new TaskId(1, 0), new TaskId(0, 0), new TaskId(0, 1)),
            Map.of(), Map.of(), Map.of(), 0, null);
        final List<TopicPartition> assigned = List.of(new TopicPartition(R, 0), new TopicPartition(INPUT, 0), new TopicPartition(INPUT, 1));
        for (short v = 0; v <= CONSUMER_ASSIGNMENT_MAX; v++) {
            vs.add(new Vector(String.format("consumer-assignment-v%d", v), "consumer-assignment",
                "partitions R-0 input-0 input-1, userData = AssignmentInfo v" + LATEST + " active [1_0, 0_0, 0_1]",
                bytes(ConsumerProtocol.serializeAssignment(new Assignment(assigned, ByteBuffer.wrap(asg)), v))));
        }
        final short ca = CONSUMER_ASSIGNMENT_MAX;
        vs.add(new Vector("consumer-assignment-v" + ca + "-empty", "consumer-assignment", "v" + ca + ", no partitions, AssignmentInfo v" + LATEST + " empty",
            bytes(ConsumerProtocol.serializeAssignment(new Assignment(List.of(), ByteBuffer.wrap(bytes(new AssignmentInfo(LATEST, LATEST).encode()))), ca))));
    }

    // ------------------------------------------------------------ describing

    private static Object uniqueField(final SubscriptionInfo s) throws Exception {
        // SubscriptionInfo has no accessor for it; read the generated data.
        final Field f = SubscriptionInfo.class.getDeclaredField("data");
        f.setAccessible(true);
        final Object data = f.get(s);
        return data.getClass().getMethod("uniqueField").invoke(data);
    }

    private static Json describeSubscriptionInfo(final SubscriptionInfo s) throws Exception {
        final Json j = new Json().put("version", s.version()).put("latestSupportedVersion", s.latestSupportedVersion());
        if (s.version() > LATEST) {
            return j.put("future", true);
        }
        // A UUID before 3.8, a ProcessId wrapping one after.
        final Object pid = s.processId();
        j.put("processId", (pid instanceof UUID ? pid : pid.getClass().getMethod("id").invoke(pid)).toString());
        if (s.version() < 7) {
            j.put("prevTasks", sortedTasks(s.prevTasks()));
            j.put("standbyTasks", sortedTasks(s.standbyTasks()));
        } else {
            final List<Json> sums = new ArrayList<>();
            s.taskOffsetSums().entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<TaskId, Long> e) -> e.getKey().toString()))
                .forEach(e -> sums.add(new Json().put("task", e.getKey().toString()).put("offsetSum", e.getValue())));
            j.put("taskOffsetSums", sums);
        }
        if (s.userEndPoint() != null) {
            j.put("userEndPoint", s.userEndPoint());
        }
        j.put("uniqueField", uniqueField(s));
        j.put("errorCode", s.errorCode());
        final List<Json> tags = new ArrayList<>();
        if (s.version() >= MIN_CLIENT_TAGS) {
            final Map<String, String> clientTags = optionalAccessor(s, "clientTags", Map.of());
            clientTags.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> tags.add(new Json().put("key", e.getKey()).put("value", e.getValue())));
        }
        j.put("clientTags", tags);
        return j;
    }

    private static List<String> sortedTasks(final Collection<TaskId> ts) {
        final List<String> out = new ArrayList<>();
        ts.stream().sorted(Comparator.comparing(TaskId::toString)).forEach(t -> out.add(t.toString()));
        return out;
    }

    private static final Comparator<TopicPartition> TP_ORDER =
        Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    private static List<String> sortedPartitions(final Collection<TopicPartition> tps) {
        final List<String> out = new ArrayList<>();
        tps.stream().sorted(TP_ORDER).forEach(tp -> out.add(tp.toString()));
        return out;
    }

    private static List<Json> hostMap(final Map<HostInfo, Set<TopicPartition>> m) {
        final List<Json> out = new ArrayList<>();
        if (m == null) {
            return out;
        }
        m.entrySet().stream()
            .sorted(Comparator.comparing((Map.Entry<HostInfo, Set<TopicPartition>> e) -> e.getKey().host())
                .thenComparingInt(e -> e.getKey().port()))
            .forEach(e -> out.add(new Json()
                .put("host", e.getKey().host())
                .put("port", e.getKey().port())
                .put("partitions", sortedPartitions(e.getValue()))));
        return out;
    }

    private static Json describeAssignmentInfo(final AssignmentInfo a) {
        final List<String> active = new ArrayList<>();
        a.activeTasks().forEach(t -> active.add(t.toString()));
        final List<Json> standby = new ArrayList<>();
        a.standbyTasks().entrySet().stream()
            .sorted(Comparator.comparing((Map.Entry<TaskId, Set<TopicPartition>> e) -> e.getKey().toString()))
            .forEach(e -> standby.add(new Json().put("task", e.getKey().toString()).put("partitions", sortedPartitions(e.getValue()))));
        return new Json()
            .put("version", a.version())
            .put("commonlySupportedVersion", a.commonlySupportedVersion())
            .put("activeTasks", active)
            .put("standbyTasks", standby)
            .put("partitionsByHost", hostMap(a.partitionsByHost()))
            .put("standbyPartitionsByHost", hostMap(a.standbyPartitionByHost()))
            .put("errCode", a.errCode())
            .put("nextRebalanceMs", a.nextRebalanceMs());
    }

    private static Object userData(final ByteBuffer b) {
        return b == null ? null : Base64.getEncoder().encodeToString(bytes(b));
    }

    private static Json describeConsumerSubscription(final byte[] bytes) {
        final short version = ConsumerProtocol.deserializeVersion(ByteBuffer.wrap(bytes));
        final Subscription s = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(bytes));
        final List<String> owned = new ArrayList<>();
        s.ownedPartitions().forEach(tp -> owned.add(tp.toString()));
        final Json j = new Json()
            .put("version", version)
            .put("topics", new ArrayList<>(s.topics()))
            .put("userData", userData(s.userData()))
            .put("ownedPartitions", owned)
            .put("generationId", optionalAccessor(s, "generationId", Optional.<Integer>empty()).orElse(-1));
        optionalAccessor(s, "rackId", Optional.<String>empty()).ifPresent(r -> j.put("rackId", r));
        return j;
    }

    private static Json describeConsumerAssignment(final byte[] bytes) {
        final short version = ConsumerProtocol.deserializeVersion(ByteBuffer.wrap(bytes));
        final Assignment a = ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(bytes));
        final List<String> parts = new ArrayList<>();
        a.partitions().forEach(tp -> parts.add(tp.toString()));
        return new Json()
            .put("version", version)
            .put("assignedPartitions", parts)
            .put("userData", userData(a.userData()));
    }

    // ----------------------------------------------------------------- bytes

    private static String hex(final byte[] b) {
        final StringBuilder sb = new StringBuilder(b.length * 2);
        for (final byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return sb.toString();
    }

    private static byte[] unhex(final String s) {
        if (s.length() % 2 != 0) {
            throw new IllegalArgumentException("odd hex length");
        }
        final byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    // ------------------------------------------------------------------ JSON

    /** A minimal ordered JSON object writer: no dependency needed. */
    static final class Json {
        private final Map<String, Object> fields = new LinkedHashMap<>();

        Json put(final String k, final Object v) {
            fields.put(k, v);
            return this;
        }

        @Override
        public String toString() {
            final StringBuilder sb = new StringBuilder();
            write(sb, this, -1, 0);
            return sb.toString();
        }

        String pretty() {
            final StringBuilder sb = new StringBuilder();
            write(sb, this, 2, 0);
            return sb.toString();
        }

        private static void newline(final StringBuilder sb, final int indent, final int depth) {
            if (indent >= 0) {
                sb.append('\n');
                for (int i = 0; i < indent * depth; i++) {
                    sb.append(' ');
                }
            }
        }

        private static void write(final StringBuilder sb, final Object v, final int indent, final int depth) {
            if (v == null) {
                sb.append("null");
            } else if (v instanceof Json) {
                final Map<String, Object> f = ((Json) v).fields;
                sb.append('{');
                boolean first = true;
                for (final Map.Entry<String, Object> e : f.entrySet()) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    newline(sb, indent, depth + 1);
                    string(sb, e.getKey());
                    sb.append(indent >= 0 ? ": " : ":");
                    write(sb, e.getValue(), indent, depth + 1);
                }
                if (!f.isEmpty()) {
                    newline(sb, indent, depth);
                }
                sb.append('}');
            } else if (v instanceof List) {
                final List<?> l = (List<?>) v;
                sb.append('[');
                boolean nested = false;
                for (final Object o : l) {
                    nested |= o instanceof Json;
                }
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) {
                        sb.append(nested || indent < 0 ? "," : ", ");
                    }
                    if (nested) {
                        newline(sb, indent, depth + 1);
                    }
                    write(sb, l.get(i), indent, depth + 1);
                }
                if (nested && !l.isEmpty()) {
                    newline(sb, indent, depth);
                }
                sb.append(']');
            } else if (v instanceof String) {
                string(sb, (String) v);
            } else {
                sb.append(v); // numbers and booleans
            }
        }

        private static void string(final StringBuilder sb, final String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                final char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20 || c > 0x7e) {
                    sb.append(String.format("\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        }
    }
}
