// The Java client's own answer to "which partition does this key go to", for the murmur2 test in
// test/sinks/kafka.int.test.ts. Run as a single-file program against the broker's classpath:
//   java -cp '.it/kafka/lib/*' test/brokers/kafka/PartitionForKey.java <partitions> < keys
// Reads one hex-encoded key per line; prints "<murmur2> <partition>" per line, computed by
// org.apache.kafka.common.utils.Utils.murmur2 and BuiltInPartitioner.partitionForKey (what
// KafkaProducer uses for a record with a key and no explicit partition).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;

public class PartitionForKey {
  public static void main(String[] args) throws Exception {
    int partitions = Integer.parseInt(args[0]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    StringBuilder out = new StringBuilder();
    for (String line; (line = in.readLine()) != null; ) {
      byte[] key = HexFormat.of().parseHex(line.trim());
      out.append(Utils.murmur2(key)).append(' ').append(BuiltInPartitioner.partitionForKey(key, partitions)).append('\n');
    }
    System.out.print(out);
  }
}
