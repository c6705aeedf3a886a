package e2e;

import java.util.Collection;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;

/**
 * Waits until a broker answers ApiVersions and Metadata: the Admin client sends ApiVersions on
 * every new connection, then describeCluster (Metadata, or DescribeCluster on newer brokers)
 * must list at least one node. Usage: Ready bootstrap.servers=HOST:PORT [timeout.ms=60000].
 * Exit 0 and prints READY nodes=N when ready, 1 on timeout.
 */
public final class Ready {
    private Ready() {}

    public static void main(String[] argv) throws Exception {
        var args = Args.parse(argv);
        String bootstrap = args.get("bootstrap.servers");
        long deadline = System.currentTimeMillis() + Long.parseLong(args.getOrDefault("timeout.ms", "60000"));
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "3000");
        p.put("default.api.timeout.ms", "5000");
        p.put("reconnect.backoff.max.ms", "500");
        String last = "";
        try (Admin admin = Admin.create(p)) {
            while (System.currentTimeMillis() < deadline) {
                try {
                    Collection<Node> nodes = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                    if (!nodes.isEmpty()) {
                        System.out.println("READY nodes=" + nodes.size() + " bootstrap=" + bootstrap);
                        return;
                    }
                } catch (Exception e) {
                    last = String.valueOf(e);
                }
                Thread.sleep(200);
            }
        }
        System.out.println("NOT-READY bootstrap=" + bootstrap + " last=" + last);
        System.exit(1);
    }
}
