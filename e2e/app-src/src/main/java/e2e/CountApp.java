package e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.Stores;

/**
 * The e2e test application: input → groupBy(value) (repartition topic) → count (state store
 * "counts", changelog) → output (key = group key, value = count as a long).
 *
 * <p>Every input record's value is the group key, so the output for a key under
 * exactly_once_v2 read with read_committed must be exactly 1, 2, ..., N, where N is the number of
 * input records with that value.
 *
 * <p>Arguments are {@code key=value}. Keys starting with {@code app.} configure the app:
 * app.instance (name in events), app.input, app.output, app.store (memory | rocksdb),
 * app.poll.ms (task-report period). Records read by standby and warm-up tasks are reported as
 * {@code standby_loaded} (a running total, at most once per second). Every other key is a Kafka Streams property
 * (bootstrap.servers, application.id, processing.guarantee, group.protocol, application.server,
 * num.standby.replicas, state.dir, commit.interval.ms, consumer.session.timeout.ms, ...).
 * group.protocol=classic is dropped so the same arguments work on 3.9 clients.
 *
 * <p>With application.server set, it also prints an {@code iq} event whenever the Interactive
 * Queries metadata of the group changes: for every client (host:port), the topic partitions of
 * its active and standby tasks, as {@code KafkaStreams.metadataForAllStreamsClients()} reports.
 */
public final class CountApp {
    private CountApp() {}

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = Args.parse(argv);
        String instance = args.getOrDefault("app.instance", "app");
        String input = args.getOrDefault("app.input", "e2e-input");
        String output = args.getOrDefault("app.output", "e2e-output");
        String store = args.getOrDefault("app.store", "memory");
        long pollMs = Long.parseLong(args.getOrDefault("app.poll.ms", "100"));

        Properties p = new Properties();
        p.put("application.id", "e2e-count");
        p.put("replication.factor", "1");
        p.put("commit.interval.ms", "1000");
        // Every update reaches the changelog and the output: the verifier counts them.
        p.put("statestore.cache.max.bytes", "0");
        // Its name before 3.4 (KIP-770), for kafka-streams 2.8 and 3.x builds; 4.0 no longer knows it
        // and only logs it as unused.
        p.put("cache.max.bytes.buffering", "0");
        p.put("consumer.auto.offset.reset", "earliest");
        for (Map.Entry<String, String> e : args.entrySet()) {
            if (!e.getKey().startsWith("app.")) {
                p.put(e.getKey(), e.getValue());
            }
        }
        if ("classic".equals(p.getProperty("group.protocol"))) {
            p.remove("group.protocol");
        }

        AtomicLong processed = new AtomicLong();
        StreamsBuilder b = new StreamsBuilder();
        Materialized<String, Long, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>> mat =
            "rocksdb".equals(store)
                ? Materialized.as(Stores.persistentKeyValueStore("counts"))
                : Materialized.as(Stores.inMemoryKeyValueStore("counts"));
        b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .peek((k, v) -> processed.incrementAndGet())
            .groupBy((k, v) -> v, Grouped.with("by-value", Serdes.String(), Serdes.String()))
            .count(mat.withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams ks = new KafkaStreams(b.build(), p);
        Evt.of("start").put("instance", instance).put("kafka", Evt.kafkaVersion())
            .put("protocol", p.getProperty("group.protocol", "classic"))
            .put("guarantee", p.getProperty("processing.guarantee", "at_least_once"))
            .put("pid", ProcessHandle.current().pid()).emit();

        // The tasks and processed reports carry the state the last "state" event told, taken
        // and emitted under one lock with the listener's: the harness takes a report's state
        // as the app's current one, so a state read before a transition and emitted after its
        // event (ks.state() in the loop below) would leave it stale until the next report,
        // which a stable app may never send. Nothing of KafkaStreams is called under the lock.
        final Object reportLock = new Object();
        final AtomicReference<KafkaStreams.State> told = new AtomicReference<>(ks.state());
        ks.setStateListener((next, prev) -> {
            synchronized (reportLock) {
                told.set(next);
                Evt.of("state").put("from", prev.name()).put("to", next.name()).emit();
            }
        });
        ks.setUncaughtExceptionHandler(ex -> {
            Evt.of("uncaught").put("error", String.valueOf(ex)).emit();
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        ks.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition tp, String storeName, long start, long end) {
                Evt.of("restore_start").put("store", storeName).put("partition", tp.toString())
                    .put("start_offset", start).put("end_offset", end).emit();
            }

            @Override
            public void onBatchRestored(TopicPartition tp, String storeName, long batchEnd, long n) {
            }

            @Override
            public void onRestoreEnd(TopicPartition tp, String storeName, long total) {
                Evt.of("restore_end").put("store", storeName).put("partition", tp.toString())
                    .put("restored", total).emit();
            }
        });

        // Standby (and warm-up) tasks read the changelog through the standby update listener,
        // not the restore listener: their records are summed and reported once per second.
        AtomicLong standbyLoaded = new AtomicLong();
        onStandbyBatches(ks, standbyLoaded);

        CountDownLatch closed = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean shuttingDown = new java.util.concurrent.atomic.AtomicBoolean();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            shuttingDown.set(true);
            Evt.of("closing").emit();
            boolean clean = ks.close(Duration.ofSeconds(30));
            Evt.of("closed").put("clean", clean).put("processed", processed.get()).emit();
            closed.countDown();
        }, "e2e-shutdown"));

        ks.start();

        List<String> lastActive = null;
        List<String> lastIq = null;
        boolean reportIq = p.getProperty("application.server") != null;
        List<String> lastStandby = null;
        long lastReport = 0;
        long lastProcessed = -1;
        long lastStandbyLoaded = 0;
        while (closed.getCount() > 0) {
            KafkaStreams.State st = ks.state();
            if (st == KafkaStreams.State.RUNNING || st == KafkaStreams.State.REBALANCING) {
                List<String> active = new ArrayList<>();
                List<String> standby = new ArrayList<>();
                int threads = 0;
                try {
                    for (Object t : (java.util.Collection<?>) call(ks, "metadataForLocalThreads", "localThreadsMetadata")) {
                        threads++;
                        for (Object tm : (java.util.Collection<?>) call(t, "activeTasks")) active.add(call(tm, "taskId").toString());
                        for (Object tm : (java.util.Collection<?>) call(t, "standbyTasks")) standby.add(call(tm, "taskId").toString());
                    }
                } catch (IllegalStateException raced) {
                    // The state moved on between state() and the metadata call: report next round.
                    threads = -1;
                }
                if (threads >= 0) {
                    Collections.sort(active);
                    Collections.sort(standby);
                    if (!active.equals(lastActive) || !standby.equals(lastStandby)) {
                        synchronized (reportLock) {
                            Evt.of("tasks").put("state", told.get().name()).put("active", active)
                                .put("standby", standby).put("threads", threads).emit();
                        }
                        lastActive = active;
                        lastStandby = standby;
                    }
                }
            }
            if (reportIq && st == KafkaStreams.State.RUNNING) {
                List<String> iq = iqMetadata(ks);
                if (iq != null && !iq.equals(lastIq)) {
                    Evt.of("iq").put("hosts", iq).emit();
                    lastIq = iq;
                }
            }
            long now = System.currentTimeMillis();
            if (now - lastReport >= 1000) {
                long n = processed.get();
                if (n != lastProcessed) {
                    synchronized (reportLock) {
                        Evt.of("processed").put("count", n).put("state", told.get().name()).emit();
                    }
                    lastProcessed = n;
                }
                long loaded = standbyLoaded.get();
                if (loaded != lastStandbyLoaded) {
                    Evt.of("standby_loaded").put("count", loaded).emit();
                    lastStandbyLoaded = loaded;
                }
                lastReport = now;
            }
            if (!shuttingDown.get() && (st == KafkaStreams.State.ERROR || st == KafkaStreams.State.NOT_RUNNING)) {
                Evt.of("stopped").put("state", st.name()).emit();
                System.out.flush();
                // Let the shutdown hook close the client; exit non-zero so the harness notices.
                System.exit(3);
            }
            Thread.sleep(pollMs);
        }
    }

    /**
     * Adds every standby batch's size to loaded, through KafkaStreams.setStandbyUpdateListener
     * (kafka-streams 3.7+, KIP-988), made at run time from the interface by name: the same source
     * is compiled against 2.8 and 3.6, which have no such listener (there loaded stays 0).
     */
    private static void onStandbyBatches(KafkaStreams ks, AtomicLong loaded) {
        Class<?> listener;
        try {
            listener = Class.forName("org.apache.kafka.streams.processor.StandbyUpdateListener");
        } catch (ClassNotFoundException before37) {
            return;
        }
        Object proxy = java.lang.reflect.Proxy.newProxyInstance(listener.getClassLoader(), new Class<?>[] {listener},
            (self, method, args) -> {
                switch (method.getName()) {
                    case "onBatchLoaded":
                        // (topicPartition, storeName, taskId, batchEndOffset, batchSize, currentEndOffset)
                        loaded.addAndGet((Long) args[4]);
                        return null;
                    case "hashCode":
                        return System.identityHashCode(self);
                    case "equals":
                        return self == args[0];
                    case "toString":
                        return "standby batch counter";
                    default:
                        return null;
                }
            });
        try {
            KafkaStreams.class.getMethod("setStandbyUpdateListener", listener).invoke(ks, proxy);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("setStandbyUpdateListener", e);
        }
    }

    /**
     * The IQ metadata of all clients as sorted "host:port|active partitions|standby partitions"
     * strings (partitions sorted, comma-separated), or null when the state moved on meanwhile.
     */
    private static List<String> iqMetadata(KafkaStreams ks) {
        List<String> hosts = new ArrayList<>();
        try {
            for (Object m : (java.util.Collection<?>) call(ks, "metadataForAllStreamsClients", "allMetadata")) {
                hosts.add(call(m, "host") + ":" + call(m, "port") + "|" + partitions(call(m, "topicPartitions")) + "|"
                    + partitions(call(m, "standbyTopicPartitions")));
            }
        } catch (RuntimeException raced) {
            return null;
        }
        Collections.sort(hosts);
        return hosts;
    }

    /**
     * Calls the first of the named no-argument methods o has. The same source is compiled against
     * kafka-streams 2.8 to 4.4, whose metadata API moved in 3.0 (KIP-744: metadataForLocalThreads
     * and metadataForAllStreamsClients replaced localThreadsMetadata and allMetadata, removed in
     * 4.0; ThreadMetadata, TaskMetadata and StreamsMetadata moved packages, their methods kept
     * their names), so it names them instead of linking them.
     */
    private static Object call(Object o, String... methods) {
        java.lang.reflect.Method m = null;
        for (String name : methods) {
            try {
                m = o.getClass().getMethod(name);
                break;
            } catch (NoSuchMethodException next) {
                // an older or newer kafka-streams
            }
        }
        if (m == null) throw new IllegalStateException(o.getClass() + " has none of " + String.join(", ", methods));
        try {
            m.setAccessible(true);
            return m.invoke(o);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException) throw (RuntimeException) e.getCause();
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String partitions(Object tps) {
        List<String> out = new ArrayList<>();
        for (Object tp : (java.util.Collection<?>) tps) out.add(tp.toString());
        Collections.sort(out);
        return String.join(",", out);
    }
}
