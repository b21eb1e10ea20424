// 1,000 create / generate / destroy cycles through every kind of handle leave the process's
// resident set flat (VmRSS from /proc/self/status), and the engine ends with every KV block free.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LeakTest {
  static final int CYCLES = 1000;
  static final int ENGINE_CYCLES = 8;
  // One leaked engine keeps its touched weights (70 MiB for the tiny model) and KV cache resident;
  // allocator fragmentation from loading tokenizer.json eight times stays well under this.
  static final long ENGINE_BOUND_KIB = 48 * 1024;
  // The suite runs the JVM with a fixed, pre-touched heap and MALLOC_ARENA_MAX=2, so Java
  // allocation does not move RSS; what is left is JIT code and malloc noise (0.7 to 12 MiB seen
  // over 1,000 cycles). A leak of a few dozen KiB per cycle, or of any engine, exceeds it.
  static final long BOUND_KIB = 24 * 1024;

  private static void cycle(Engine engine, Recipe recipe, int[] prompt, int i) {
    try (Options s = new Options().set("max_tokens", 2L).set("temperature", 1.0).set("seed", (long) i);
        Request r = engine.submit(prompt, s);
        Parser p = Parser.create("{\"protocol\": \"chat\", \"stream\": true}")) {
      for (Chunk c : r) p.push(c, null);
      p.response();
    }
    if (i % 10 == 0) {
      try (Prepared prep = recipe.prepare(Protocol.MESSAGES,
          "{\"model\": \"deepseek-chat\", \"max_tokens\": 2, \"messages\": [{\"role\": \"user\", \"content\": \"hi "
              + i + "\"}]}")) {
        prep.prompt();
        prep.samplingJson();
      }
    }
    // Every tenth cycle a request is left to be cancelled by close() while still generating.
    if (i % 10 == 5) {
      try (Options s = new Options().set("max_tokens", 50L); Request r = engine.submit(prompt, s)) {
        r.poll(5);
      }
    }
    Tokenizer t = TestEnv.tokenizer();
    if (!t.decode(t.encode("cycle \uD83D\uDE00 " + i)).equals("cycle \uD83D\uDE00 " + i)) throw new AssertionError();
  }

  @Test
  void thousandCyclesKeepRssFlat() throws Exception {
    int[] prompt = TestEnv.tokenizer().encode(EngineTest.PROMPT, false, true);
    Engine engine = TestEnv.engine();
    Recipe recipe = TestEnv.recipe();
    {
      for (int i = 0; i < 100; i++) cycle(engine, recipe, prompt, i);  // warm-up: JIT, arenas, caches
      CancelTest.waitUntilIdle(engine);
      System.gc();
      long before = TestEnv.rssKib();
      for (int i = 0; i < CYCLES; i++) cycle(engine, recipe, prompt, i);
      CancelTest.waitUntilIdle(engine);
      System.gc();
      long after = TestEnv.rssKib();
      System.out.printf("LeakTest: VmRSS %d KiB -> %d KiB after %d cycles (%+d KiB, bound %d)%n", before, after,
          CYCLES, after - before, BOUND_KIB);
      assertTrue(after - before < BOUND_KIB, "RSS grew by " + (after - before) + " KiB over " + CYCLES + " cycles");
    }
  }

  @Test
  void engineCreateDestroyCyclesKeepRssFlat() throws Exception {
    int[] prompt = TestEnv.tokenizer().encode(EngineTest.PROMPT, false, true);
    Runnable cycle = () -> {
      try (Engine e = Engine.open(TestEnv.model()); Options s = new Options().set("max_tokens", 2L).set("ignore_eos", 1L);
          Request r = e.submit(prompt, s)) {
        assertEquals(2, TestEnv.drain(r).tokens().length);
      }
    };
    // Loading the model and tokenizer dominates, so fewer cycles; a leaked engine (its KV cache
    // alone is tens of MiB) would still blow the bound at once.
    for (int i = 0; i < 2; i++) cycle.run();
    System.gc();
    long before = TestEnv.rssKib();
    for (int i = 0; i < ENGINE_CYCLES; i++) cycle.run();
    System.gc();
    long after = TestEnv.rssKib();
    System.out.printf("LeakTest: %d engine cycles VmRSS %d KiB -> %d KiB (%+d KiB)%n", ENGINE_CYCLES, before, after,
        after - before);
    assertTrue(after - before < ENGINE_BOUND_KIB, "RSS grew by " + (after - before) + " KiB over engine cycles");
  }
}
