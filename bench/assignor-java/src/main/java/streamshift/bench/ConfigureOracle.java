package streamshift.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.StreamsInvalidTopologyException;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.StreamsGroupHeartbeatRequestData;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataDelta;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.streams.StreamsTopology;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredInternalTopic;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredSubtopology;
import org.apache.kafka.coordinator.group.streams.topics.ConfiguredTopology;
import org.apache.kafka.coordinator.group.streams.topics.InternalTopicManager;
import org.apache.kafka.coordinator.group.streams.topics.TopicConfigurationException;

import org.slf4j.LoggerFactory;

import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Runs Kafka 4.4's InternalTopicManager.configureTopics on topology cases
 * written by streamshift's differential test (coordinator/streams/topology,
 * build tag kafkajava):
 *
 *   java -cp ... streamshift.bench.ConfigureOracle cases.json results.json
 *
 * Each case is a heartbeat topology plus the cluster's partition counts;
 * each result is what Kafka decided, or the exception it threw.
 */
public final class ConfigureOracle {

    public static void main(String[] args) throws Exception {
        final ObjectMapper mapper = new ObjectMapper();
        final JsonNode cases = mapper.readTree(new File(args[0]));
        final ArrayNode results = mapper.createArrayNode();
        for (JsonNode c : cases) {
            results.add(run(mapper, c));
        }
        mapper.writeValue(new File(args[1]), results);
    }

    private static ObjectNode run(ObjectMapper mapper, JsonNode c) {
        final ObjectNode out = mapper.createObjectNode();
        final Map<String, Integer> cluster = new HashMap<>();
        c.path("cluster").fields().forEachRemaining(e -> cluster.put(e.getKey(), e.getValue().asInt()));
        try {
            final StreamsTopology topology = StreamsTopology.fromHeartbeatRequest(topology(c.path("topology")));
            final ConfiguredTopology ct = InternalTopicManager.configureTopics(
                LoggerFactory.getLogger(ConfigureOracle.class), "group", "member", 0L, topology, image(cluster), Time.SYSTEM);
            if (ct.topicConfigurationException().isPresent()) {
                final TopicConfigurationException e = ct.topicConfigurationException().get();
                out.put("status", e.status().code());
                out.put("message", e.getMessage());
            }
            if (ct.subtopologies().isPresent()) {
                final ObjectNode subs = out.putObject("subtopologies");
                for (Map.Entry<String, ConfiguredSubtopology> e : ct.subtopologies().get().entrySet()) {
                    final ObjectNode s = subs.putObject(e.getKey());
                    s.put("numTasks", e.getValue().numberOfTasks());
                    s.set("repartition", counts(mapper, e.getValue().repartitionSourceTopics()));
                    s.set("changelog", counts(mapper, e.getValue().stateChangelogTopics()));
                }
            }
            final ObjectNode create = out.putObject("create");
            for (Map.Entry<String, CreatableTopic> e : new TreeMap<>(ct.internalTopicsToBeCreated()).entrySet()) {
                final ObjectNode t = create.putObject(e.getKey());
                t.put("partitions", e.getValue().numPartitions());
                t.put("replicationFactor", e.getValue().replicationFactor());
                final ObjectNode configs = t.putObject("configs");
                e.getValue().configs().forEach(cfg -> configs.put(cfg.name(), cfg.value()));
            }
        } catch (StreamsInvalidTopologyException e) {
            out.put("errorCode", 130);
            out.put("message", e.getMessage());
        } catch (RuntimeException e) {
            out.put("errorCode", -1);
            out.put("message", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return out;
    }

    private static ObjectNode counts(ObjectMapper mapper, Map<String, ConfiguredInternalTopic> topics) {
        final ObjectNode node = mapper.createObjectNode();
        for (Map.Entry<String, ConfiguredInternalTopic> e : new TreeMap<>(topics).entrySet()) {
            node.put(e.getKey(), e.getValue().numberOfPartitions());
        }
        return node;
    }

    private static StreamsGroupHeartbeatRequestData.Topology topology(JsonNode t) {
        final List<StreamsGroupHeartbeatRequestData.Subtopology> subs = new ArrayList<>();
        for (JsonNode s : t.path("subtopologies")) {
            final List<StreamsGroupHeartbeatRequestData.CopartitionGroup> groups = new ArrayList<>();
            for (JsonNode g : s.path("copartitionGroups")) {
                groups.add(new StreamsGroupHeartbeatRequestData.CopartitionGroup()
                    .setSourceTopics(shorts(g.path("sourceTopics")))
                    .setRepartitionSourceTopics(shorts(g.path("repartitionSourceTopics"))));
            }
            subs.add(new StreamsGroupHeartbeatRequestData.Subtopology()
                .setSubtopologyId(s.get("id").asText())
                .setSourceTopics(strings(s.path("sourceTopics")))
                .setRepartitionSinkTopics(strings(s.path("repartitionSinkTopics")))
                .setRepartitionSourceTopics(topicInfos(s.path("repartitionSourceTopics")))
                .setStateChangelogTopics(topicInfos(s.path("stateChangelogTopics")))
                .setCopartitionGroups(groups));
        }
        return new StreamsGroupHeartbeatRequestData.Topology().setEpoch(t.path("epoch").asInt()).setSubtopologies(subs);
    }

    private static List<StreamsGroupHeartbeatRequestData.TopicInfo> topicInfos(JsonNode node) {
        final List<StreamsGroupHeartbeatRequestData.TopicInfo> out = new ArrayList<>();
        for (JsonNode ti : node) {
            final List<StreamsGroupHeartbeatRequestData.KeyValue> configs = new ArrayList<>();
            for (JsonNode kv : ti.path("configs")) {
                configs.add(new StreamsGroupHeartbeatRequestData.KeyValue().setKey(kv.get("key").asText()).setValue(kv.get("value").asText()));
            }
            out.add(new StreamsGroupHeartbeatRequestData.TopicInfo()
                .setName(ti.get("name").asText())
                .setPartitions(ti.path("partitions").asInt(0))
                .setReplicationFactor((short) ti.path("replicationFactor").asInt(0))
                .setTopicConfigs(configs));
        }
        return out;
    }

    private static List<String> strings(JsonNode node) {
        final List<String> out = new ArrayList<>();
        node.forEach(n -> out.add(n.asText()));
        return out;
    }

    private static List<Short> shorts(JsonNode node) {
        final List<Short> out = new ArrayList<>();
        node.forEach(n -> out.add((short) n.asInt()));
        return out;
    }

    private static CoordinatorMetadataImage image(Map<String, Integer> cluster) {
        final Map<String, Uuid> ids = new HashMap<>();
        cluster.keySet().forEach(t -> ids.put(t, Uuid.randomUuid()));
        return new CoordinatorMetadataImage() {
            @Override
            public Set<Uuid> topicIds() {
                return Set.copyOf(ids.values());
            }

            @Override
            public Set<String> topicNames() {
                return cluster.keySet();
            }

            @Override
            public Optional<TopicMetadata> topicMetadata(String topicName) {
                final Integer n = cluster.get(topicName);
                if (n == null) return Optional.empty();
                return Optional.of(new TopicMetadata() {
                    @Override
                    public String name() {
                        return topicName;
                    }

                    @Override
                    public Uuid id() {
                        return ids.get(topicName);
                    }

                    @Override
                    public int partitionCount() {
                        return n;
                    }

                    @Override
                    public List<String> partitionRacks(int partition) {
                        return List.of();
                    }
                });
            }

            @Override
            public Optional<TopicMetadata> topicMetadata(Uuid id) {
                return ids.entrySet().stream().filter(e -> e.getValue().equals(id)).findFirst()
                    .flatMap(e -> topicMetadata(e.getKey()));
            }

            @Override
            public CoordinatorMetadataDelta emptyDelta() {
                throw new UnsupportedOperationException();
            }

            @Override
            public long version() {
                return 0;
            }

            @Override
            public boolean isEmpty() {
                return cluster.isEmpty();
            }
        };
    }
}
