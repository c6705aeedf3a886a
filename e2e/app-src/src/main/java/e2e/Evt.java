package e2e;

import java.util.Collection;
import java.util.Map;

/**
 * Machine-readable output: one line per event, {@code EVT {"t":<epoch ms>,"ev":"<kind>",...}}.
 * The Go harness (e2e/harness) parses these lines; everything else on stdout is ignored.
 * Hand-rolled JSON so the app needs nothing beyond kafka-streams on both 3.9 and 4.4.
 */
final class Evt {
    private final StringBuilder sb = new StringBuilder(128);

    private Evt(String kind) {
        sb.append("EVT {\"t\":").append(System.currentTimeMillis()).append(",\"ev\":");
        str(kind);
    }

    /** The kafka-clients version on the classpath (AppInfoParser moved packages in 4.x). */
    static String kafkaVersion() {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = Evt.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            if (in != null) p.load(in);
        } catch (java.io.IOException ignored) {
            // Only informational.
        }
        return p.getProperty("version", "unknown");
    }

    static Evt of(String kind) {
        return new Evt(kind);
    }

    Evt put(String key, Object value) {
        sb.append(',');
        str(key);
        sb.append(':');
        val(value);
        return this;
    }

    void emit() {
        sb.append('}');
        // println is synchronized: lines from different threads never interleave.
        System.out.println(sb);
    }

    private void val(Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) sb.append(',');
                first = false;
                str(String.valueOf(e.getKey()));
                sb.append(':');
                val(e.getValue());
            }
            sb.append('}');
        } else if (v instanceof Collection) {
            sb.append('[');
            boolean first = true;
            for (Object o : (Collection<?>) v) {
                if (!first) sb.append(',');
                first = false;
                val(o);
            }
            sb.append(']');
        } else {
            str(String.valueOf(v));
        }
    }

    private void str(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }
}
