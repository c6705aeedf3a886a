package org.apache.kafka.test;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

/**
 * The one method of Kafka's clients TestUtils that the 4.4 smoke-test fixtures call
 * (SmokeTestClient's state dir). The real class lives in kafka-clients test-fixtures,
 * which Maven Central does not serve for 4.4.
 */
public final class TestUtils {
    private TestUtils() {}

    public static File tempDirectory() {
        try {
            File dir = Files.createTempDirectory("kafka-").toFile();
            dir.deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("create temp directory", e);
        }
    }
}
