// Decode prints, for each line of hex bytes on stdin, the line and the
// UTF-8 bytes of new String(bytes, UTF_8): how Kafka reads a protocol
// string. Regenerate java17.txt with
//   go test -count=1 -v ./internal/kafkautf8 -run TestJavaVectors -args -inputs | grep -E '^[0-9a-f]+$' \
//     | java internal/kafkautf8/testdata/Decode.java > internal/kafkautf8/testdata/java17.txt
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

public class Decode {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        HexFormat hex = HexFormat.of();
        System.out.println("# input-hex java-new-String-UTF_8-as-UTF-8-hex (" + System.getProperty("java.version") + ")");
        for (String line; (line = in.readLine()) != null; ) {
            line = line.trim();
            if (line.isEmpty() || line.startsWith("=")) continue;
            byte[] b = hex.parseHex(line);
            String s = new String(b, StandardCharsets.UTF_8);
            System.out.println(line + " " + hex.formatHex(s.getBytes(StandardCharsets.UTF_8)));
        }
    }
}
