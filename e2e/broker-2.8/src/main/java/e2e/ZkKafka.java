package e2e;

import java.net.InetSocketAddress;
import java.net.Socket;

import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;

/**
 * A ZooKeeper server and a Kafka broker in one JVM, for the e2e suite's ZooKeeper-mode broker:
 * {@code ZkKafka ZK_PORT ZK_DATA_DIR server.properties}. ZooKeeper runs on a daemon thread; the
 * broker runs as kafka.Kafka would, so the process lives and dies with the broker.
 */
public final class ZkKafka {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ZkKafka ZK_PORT ZK_DATA_DIR server.properties");
            System.exit(2);
        }
        // The AdminServer wants Jetty, which Kafka does not bring; nothing here uses it.
        System.setProperty("zookeeper.admin.enableServer", "false");
        ServerConfig zk = new ServerConfig();
        zk.parse(new String[] {args[0], args[1]});
        Thread t = new Thread(() -> {
            try {
                new ZooKeeperServerMain().runFromConfig(zk);
            } catch (Exception e) {
                e.printStackTrace();
                System.exit(1);
            }
        }, "zookeeper");
        t.setDaemon(true);
        t.start();
        int port = Integer.parseInt(args[0]);
        long deadline = System.currentTimeMillis() + 30_000;
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                break;
            } catch (java.io.IOException notYet) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("ZooKeeper did not listen on " + port);
                Thread.sleep(100);
            }
        }
        kafka.Kafka.main(new String[] {args[2]});
    }
}
