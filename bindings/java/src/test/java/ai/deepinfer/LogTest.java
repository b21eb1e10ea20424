// DeepInfer.setLogListener: the load phases of Engine.open reach the listener (the cache line
// states the blocks Engine.info reports), the level filters, a bad level is refused.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class LogTest {
  @Test
  void listenerReceivesTheLoadPhasesOfAnEngine() {
    List<String> got = new CopyOnWriteArrayList<>();
    List<Integer> levels = new CopyOnWriteArrayList<>();
    DeepInfer.setLogListener((level, message) -> {
      got.add(message);
      levels.add(level);
    }, LogListener.INFO);
    String info;
    try (Engine e = Engine.open(TestEnv.model())) {
      info = e.info();
    } finally {
      DeepInfer.setLogListener(null, LogListener.WARN);
    }
    String all = String.join("\n", got);
    @SuppressWarnings("unchecked")
    Map<String, Object> limits = (Map<String, Object>) ((Map<String, Object>) MiniJson.parse(info)).get("limits");
    long blocks = ((Number) limits.get("num_kv_blocks")).longValue();
    long blockSize = ((Number) limits.get("block_size")).longValue();
    for (String want : new String[] {"config: ", "device: cpu", "weights: loaded in ", "engine ready: ",
        "kv cache: " + blocks + " blocks of " + blockSize + " tokens"}) {
      assertTrue(all.contains(want), "no record with '" + want + "' in:\n" + all);
    }
    for (int l : levels) assertEquals(LogListener.INFO, l);
  }

  @Test
  void levelFiltersAndBadLevelsAreRefused() {
    List<String> got = new CopyOnWriteArrayList<>();
    DeepInfer.setLogListener((level, message) -> got.add(message), LogListener.WARN);
    try {
      DeepInferException ex = assertThrows(DeepInferException.class,
          () -> DeepInfer.setLogListener((level, message) -> {}, 9));
      assertEquals(Status.INVALID_ARG, ex.status());
      Engine.open(TestEnv.model()).close();
      assertEquals(List.of(), got);
    } finally {
      DeepInfer.setLogListener(null, LogListener.WARN);
    }
  }
}
