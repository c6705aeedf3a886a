package e2e.systest;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;

import org.apache.kafka.streams.tests.SmokeTestClient;
import org.apache.kafka.streams.tests.SmokeTestDriver;
import org.apache.kafka.streams.tests.SmokeTestUtil;

/**
 * Launcher with the command line of Kafka's org.apache.kafka.streams.tests.StreamsSmokeTest
 * ({@code <props> run|process}), for 4.4 where Maven Central serves the smoke-test driver and
 * client (kafka-streams test-fixtures) but not the test jar that holds the original main.
 * Markers are the upstream ones: the driver prints ALL-RECORDS-DELIVERED and SUCCESS / FAILURE,
 * the client SMOKE-TEST-CLIENT-STARTED/-CLOSED and "processed N records".
 */
public final class StreamsSmokeTest {
    private StreamsSmokeTest() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: StreamsSmokeTest <props-file> run|process");
            System.exit(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        String bootstrap = props.getProperty("bootstrap.servers");
        boolean eos = props.getProperty("processing.guarantee", "at_least_once").startsWith("exactly_once");
        System.out.println("StreamsTest instance started (StreamsSmokeTest)");
        System.out.println("command=" + args[1]);
        switch (args[1]) {
            case "run": {
                int numKeys = Integer.parseInt(props.getProperty("smoke.num.keys", "20"));
                int maxRecordsPerKey = Integer.parseInt(props.getProperty("smoke.records.per.key", "1000"));
                long seconds = Long.parseLong(props.getProperty("smoke.duration.seconds", "90"));
                Map<String, Set<Integer>> all = SmokeTestDriver.generate(bootstrap, numKeys, maxRecordsPerKey, Duration.ofSeconds(seconds));
                SmokeTestUtil.VerificationResult result = SmokeTestDriver.verify(bootstrap, all, maxRecordsPerKey, eos);
                System.out.flush();
                System.exit(result.passed() ? 0 : 1);
                break;
            }
            case "process":
                new SmokeTestClient(UUID.randomUUID().toString()).start(props);
                break;
            default:
                System.err.println("unknown command " + args[1]);
                System.exit(2);
        }
    }
}
