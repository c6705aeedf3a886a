package e2e;

import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Plain-client check (no Streams): creates a topic, produces N records with an idempotent
 * (optionally transactional) producer, then consumes them back in a consumer group and commits.
 * Used to prove a path (e.g. the streamshift proxy) serves ordinary clients.
 *
 * <p>Arguments (key=value): bootstrap.servers, topic (default e2e-check), partitions (3),
 * records (1000), transactional (false), group.id (e2e-check), group.protocol (classic |
 * consumer), timeout.ms (60000). Prints EVT lines "produced" and "consumed"; exit 0 only if every
 * produced record was consumed exactly once.
 */
public final class ClientCheck {
    private ClientCheck() {}

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Args.parse(argv);
        String bootstrap = a.get("bootstrap.servers");
        String topic = a.getOrDefault("topic", "e2e-check");
        int partitions = Integer.parseInt(a.getOrDefault("partitions", "3"));
        int records = Integer.parseInt(a.getOrDefault("records", "1000"));
        boolean txn = Boolean.parseBoolean(a.getOrDefault("transactional", "false"));
        String group = a.getOrDefault("group.id", "e2e-check");
        String protocol = a.getOrDefault("group.protocol", "classic");
        long timeoutMs = Long.parseLong(a.getOrDefault("timeout.ms", "60000"));
        String run = Long.toString(System.currentTimeMillis());

        Evt.of("start").put("kafka", Evt.kafkaVersion()).put("transactional", txn)
            .put("protocol", protocol).emit();

        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) throw e;
        }

        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("enable.idempotence", "true");
        pp.put("acks", "all");
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        if (txn) pp.put("transactional.id", "e2e-check-" + run);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            if (txn) {
                producer.initTransactions();
                producer.beginTransaction();
            }
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, run + ":" + i));
            }
            if (txn) {
                producer.commitTransaction();
            } else {
                producer.flush();
            }
        }
        Evt.of("produced").put("count", records).put("run", run).emit();

        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        if (!"classic".equals(protocol)) cp.put("group.protocol", protocol);
        cp.put("auto.offset.reset", "earliest");
        cp.put("enable.auto.commit", "false");
        cp.put("isolation.level", "read_committed");
        cp.put("key.deserializer", StringDeserializer.class.getName());
        cp.put("value.deserializer", StringDeserializer.class.getName());
        Set<String> seen = new HashSet<>();
        int dups = 0;
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
            consumer.subscribe(Collections.singletonList(topic));
            while (seen.size() < records && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    if (!r.value().startsWith(run + ":")) continue; // earlier runs on the same topic
                    if (!seen.add(r.value())) dups++;
                }
                consumer.commitSync();
            }
        }
        Evt.of("consumed").put("count", seen.size()).put("duplicates", dups).emit();
        System.exit(seen.size() == records && dups == 0 ? 0 : 1);
    }
}
