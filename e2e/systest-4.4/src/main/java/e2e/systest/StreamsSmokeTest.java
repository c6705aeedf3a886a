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
                SmokeTestUtil.VerificationResult result = verify(bootstrap, all, maxRecordsPerKey, eos);
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

    /** Kafka's message when its transaction check read a log grown between its two reads. */
    static final String END_OFFSET_RACE = "is larger than topic endOffset";

    /** How often verify runs the driver's verification again after END_OFFSET_RACE. */
    static final int END_OFFSET_RACE_ATTEMPTS = 10;

    /**
     * SmokeTestDriver.verify, run again when its exactly-once transaction check
     * (verifyAllTransactionFinished) fails on its own race. Right after the input ends the
     * clients are still processing it, committing transactions to the output topics; the check
     * reads each output partition's end offset (read_uncommitted) and only afterwards the read_committed
     * position (the last stable offset). A transaction committed between the two reads makes the
     * later stable offset larger than the earlier end offset, "Offset for partition max-1 is
     * larger than topic endOffset: 69 > 68", and the driver fails at once. That can only mean the
     * log grew (a truncated log makes the later offset smaller, never larger): nothing was lost,
     * and the check, asked again, waits as it does for any open transaction. Every other result,
     * failures included, is the driver's own, and a repeated check is the whole verification
     * again, output verification included.
     */
    static SmokeTestUtil.VerificationResult verify(String bootstrap, Map<String, Set<Integer>> all, int maxRecordsPerKey, boolean eos) {
        for (int attempt = 1; ; attempt++) {
            SmokeTestUtil.VerificationResult result = SmokeTestDriver.verify(bootstrap, all, maxRecordsPerKey, eos);
            if (result.passed() || !eos || !result.result().contains(END_OFFSET_RACE) || attempt >= END_OFFSET_RACE_ATTEMPTS) {
                return result;
            }
            System.out.println("e2e launcher: the transaction check read an output partition's end offset before a"
                + " commit and its stable offset after it (" + result.result() + "): the clients are still committing;"
                + " verifying again (attempt " + (attempt + 1) + " of " + END_OFFSET_RACE_ATTEMPTS + ")");
            try {
                Thread.sleep(1000L);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return result;
            }
        }
    }
}
