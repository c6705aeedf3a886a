package e2e;

import java.util.LinkedHashMap;
import java.util.Map;

/** Parses {@code key=value} arguments; later arguments win. */
final class Args {
    private Args() {}

    static Map<String, String> parse(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("argument is not key=value: " + a);
            }
            m.put(a.substring(0, eq), a.substring(eq + 1));
        }
        return m;
    }
}
