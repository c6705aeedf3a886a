package io.streamshift.e2e.kroxylicious;

import java.nio.file.Files;
import java.nio.file.Path;

import io.kroxylicious.proxy.KafkaProxy;
import io.kroxylicious.proxy.config.ConfigParser;
import io.kroxylicious.proxy.config.Configuration;
import io.kroxylicious.proxy.internal.config.Features;

/**
 * Starts Kroxylicious from a YAML configuration file, as its unpublished -app CLI
 * (io.kroxylicious.app.Kroxylicious) does: parse, start, block until shut down.
 * Usage: Launch config.yaml
 */
public final class Launch {
    private Launch() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Launch <config.yaml>");
            System.exit(2);
        }
        ConfigParser parser = new ConfigParser();
        Configuration config = parser.parseConfiguration(Files.readString(Path.of(args[0])));
        try (KafkaProxy proxy = new KafkaProxy(parser, config, Features.defaultFeatures())) {
            Runtime.getRuntime().addShutdownHook(new Thread(proxy::shutdown));
            proxy.startup();
            System.out.println("KROXYLICIOUS STARTED");
            proxy.block();
        }
    }
}
