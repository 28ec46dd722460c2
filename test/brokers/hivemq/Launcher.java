// Runs an embedded HiveMQ Community Edition broker for weir's integration tests, since the
// embedded artifact on Maven Central has no main class of its own:
//
//   java -cp '.it/hivemq/classes:.it/hivemq/lib/*' [-Dweir.hivemq.inflight=N] \
//     weir.it.hivemq.Launcher <config dir> <data dir> <extensions dir>
//
// The config dir holds config.xml (test/harness/hivemq.ts writes it). SIGTERM stops the broker
// gracefully from a shutdown hook, so its persistence is closed and flushed; "weir-hivemq: started"
// and "weir-hivemq: stopped" on stdout mark both ends.
//
// weir.hivemq.inflight sets InternalConfigurations.MAX_INFLIGHT_WINDOW_SIZE_MESSAGES before the
// broker starts: the cap on QoS 1/2 messages in flight to one subscriber (default 50, no config.xml
// element). HiveMQ reads that public static field at each poll, so setting it before start() is
// enough.
package weir.it.hivemq;

import com.hivemq.configuration.service.InternalConfigurations;
import com.hivemq.embedded.EmbeddedHiveMQ;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: Launcher <config dir> <data dir> <extensions dir>");
      System.exit(2);
    }
    String inflight = System.getProperty("weir.hivemq.inflight");
    if (inflight != null && !inflight.isEmpty()) {
      InternalConfigurations.MAX_INFLIGHT_WINDOW_SIZE_MESSAGES = Integer.parseInt(inflight);
    }
    EmbeddedHiveMQ hivemq = EmbeddedHiveMQ.builder()
        .withConfigurationFolder(Path.of(args[0]))
        .withDataFolder(Path.of(args[1]))
        .withExtensionsFolder(Path.of(args[2]))
        .build();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        hivemq.stop().get(60, TimeUnit.SECONDS);
        System.out.println("weir-hivemq: stopped");
      } catch (Exception e) {
        System.err.println("weir-hivemq: stop failed: " + e);
      }
    }, "weir-hivemq-stop"));
    try {
      hivemq.start().join();
    } catch (Exception e) {
      System.err.println("weir-hivemq: start failed: " + e);
      e.printStackTrace();
      System.exit(1);
    }
    System.out.println("weir-hivemq: started (max inflight window "
        + InternalConfigurations.MAX_INFLIGHT_WINDOW_SIZE_MESSAGES + ")");
    // The broker's threads keep the JVM alive; main returns.
  }
}
