package streamshift.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

import java.io.File;

/**
 * Runs Kafka's StickyTaskAssignor on many inputs (a JSON array of the
 * driver's input format) and writes the assignments, for the assignor's
 * differential test (go test -tags kafkajava ./coordinator/streams/assignor/):
 *
 *   java -cp ... streamshift.bench.AssignorOracle inputs.json results.json
 */
public final class AssignorOracle {
    public static void main(String[] args) throws Exception {
        final ObjectMapper mapper = new ObjectMapper();
        final ArrayNode results = mapper.createArrayNode();
        for (JsonNode in : mapper.readTree(new File(args[0]))) {
            final AssignorBench.Input input = AssignorBench.parse(in);
            ObjectNode out;
            try {
                out = AssignorBench.toJson(mapper, new StickyTaskAssignor().assign(input.spec(), input.topology()));
            } catch (RuntimeException e) {
                out = mapper.createObjectNode();
                out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            results.add(out);
        }
        mapper.writeValue(new File(args[1]), results);
    }
}
