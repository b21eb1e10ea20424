// Generation through the binding on the bundled tiny model: the same tokens as the C ABI's
// di_submit (via `deepinfer generate --json`) for the same prompt and seed, streamed text that is
// valid UTF-8 and equals the decoded tokens, listener delivery on one attached daemon thread that
// is gone after the engine closes, listener failures contained, info and metrics.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

class EngineTest {
  static final String PROMPT = "The capital of France is";

  private static String idList(int[] ids) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < ids.length; i++) b.append(i == 0 ? "" : ",").append(ids[i]);
    return b.toString();
  }

  private static Map<String, Object> cliGenerate(int[] prompt, String... flags) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(TestEnv.cli().toString(), "generate", "--model",
        TestEnv.model().toString(), "--prompt-ids", idList(prompt), "--json"));
    Collections.addAll(cmd, flags);
    return MiniJson.object(TestEnv.run(cmd, null).trim());
  }

  private static int[] ints(Object list) {
    return ((List<?>) list).stream().mapToInt(o -> (int) TestEnv.number(o)).toArray();
  }

  @Test
  void sampledGenerationEqualsTheCApiForTheSamePromptAndSeed() throws Exception {
    int[] prompt = TestEnv.tokenizer().encode(PROMPT, false, true);
    for (int seed : new int[] {0, 7}) {
      Map<String, Object> ref = cliGenerate(prompt, "--max-tokens", "24", "--temperature", "0.8", "--seed",
          Integer.toString(seed));
      try (Options s = Options.fromJson("{\"max_tokens\": 24, \"temperature\": 0.8, \"seed\": " + seed + "}");
          Request r = TestEnv.engine().submit(prompt, s)) {
        TestEnv.Drained d = TestEnv.drain(r);
        assertArrayEquals(ints(ref.get("ids")), d.tokens(), "seed " + seed);
        assertEquals(ref.get("text"), new String(d.text(), StandardCharsets.UTF_8));
        assertTrue(d.last().isFinal());
        assertTrue(d.last().finishReason() == FinishReason.LENGTH || d.last().finishReason() == FinishReason.STOP);
        assertEquals(prompt.length, d.last().promptTokens());
      }
    }
  }

  @Test
  void greedyGenerationEqualsTheCApi() throws Exception {
    int[] prompt = TestEnv.tokenizer().encode("Once upon a time \uD83D\uDE00", false, true);
    Map<String, Object> ref = cliGenerate(prompt, "--max-tokens", "16", "--temperature", "0");
    try (Options s = Options.fromJson("{\"max_tokens\": 16, \"temperature\": 0}");
        Request r = TestEnv.engine().submit(prompt, s)) {
      assertArrayEquals(ints(ref.get("ids")), TestEnv.drain(r).tokens());
    }
  }

  @Test
  void streamedTextIsValidUtf8AndEqualsTheDecodedTokens() throws Exception {
    // Random weights at temperature 1.5 pick arbitrary byte-level tokens: partial and invalid
    // UTF-8 sequences come out of the model. Each chunk must still be valid text on its own.
    int[] prompt = TestEnv.tokenizer().encode("\uD83D\uDE00\uD834\uDD1E", false, true);
    for (int seed = 1; seed <= 2; seed++) {
      try (Options s = Options.fromJson("{\"max_tokens\": 120, \"temperature\": 1.5, \"ignore_eos\": 1, \"seed\": "
              + seed + "}");
          Request r = TestEnv.engine().submit(prompt, s)) {
        TestEnv.Drained d = TestEnv.drain(r);
        for (Chunk c : d.chunks()) {
          StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(c.textBytes()));  // throws if invalid
          assertEquals(c.text(), new String(c.textBytes(), StandardCharsets.UTF_8));
        }
        // The stream skips special tokens by default (skip_special_tokens). Both the stream and
        // di_tokenizer_decode replace each maximal ill-formed subsequence with one U+FFFD.
        String streamed = new String(d.text(), StandardCharsets.UTF_8);
        assertEquals(TestEnv.tokenizer().decode(d.tokens(), true), streamed, "seed " + seed);
      }
    }
  }

  @Test
  void textPromptGetsTheIdsOfEveryBinding() throws Exception {
    // The ids Python's LLM.generate and Go's SubmitText give the README's prompt: the CLI's
    // `tokenize --add-special` (control tokens recognised, BOS per tokenizer_config.json).
    String line = TestEnv.run(List.of(TestEnv.cli().toString(), "tokenize", "--tokenizer",
        TestEnv.model().toString(), "--add-special"), "{\"text\": \"" + PROMPT + "\"}\n").trim();
    int[] want = ints(MiniJson.object(line).get("ids"));
    try (Options s = Options.fromJson("{\"max_tokens\": 6, \"temperature\": 0}");
         Request byText = TestEnv.engine().submit(PROMPT, s);
         Request byIds = TestEnv.engine().submit(want, s)) {
      TestEnv.Drained text = TestEnv.drain(byText);
      assertEquals((long) want.length, text.chunks().get(0).promptTokens());
      assertArrayEquals(TestEnv.drain(byIds).tokens(), text.tokens());
    }
    try (Engine closed = Engine.open(TestEnv.model())) {
      closed.close();
      assertThrows(IllegalStateException.class, () -> closed.submit(PROMPT, null));
    }
  }

  @Test
  void listenerGetsTheSameChunksOnOneAttachedDaemonThreadThatDetachesAtExit() throws Exception {
    int[] prompt = TestEnv.tokenizer().encode(PROMPT, false, true);
    String sampling = "{\"max_tokens\": 20, \"temperature\": 0.9, \"seed\": 3}";
    int[] polled;
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    List<Chunk> got = Collections.synchronizedList(new ArrayList<>());
    // Its own engine, so its threads end when we close it.
    try (Engine engine = Engine.open(TestEnv.model()); Options s = Options.fromJson(sampling)) {
      try (Request r = engine.submit(prompt, s)) {
        polled = TestEnv.drain(r).tokens();
      }
      for (int round = 0; round < 3; round++) {
        got.clear();
        try (Request r = engine.submit(prompt, s, c -> {
          threads.add(Thread.currentThread());
          got.add(c);
        })) {
          assertTrue(r.await(30_000));
          assertArrayEquals(polled, TestEnv.collect(got).tokens());
          assertTrue(got.get(got.size() - 1).isFinal());
          assertThrows(IllegalStateException.class, () -> r.poll(0));
        }
      }
    }
    // Attached once: one Thread object for every chunk of every request (a per-callback attach
    // would make a new one each time), a daemon, and no longer alive once the engine's threads
    // exited, because the thread-exit destructor detached it.
    assertEquals(1, threads.size(), threads.toString());
    Thread t = threads.iterator().next();
    assertTrue(t.isDaemon());
    assertEquals("deepinfer-engine", t.getName());
    t.join(30_000);  // the engine's threads exited at close; the join only absorbs a slow machine
    assertFalse(t.isAlive(), "the engine thread is still attached after it exited");
  }

  @Test
  void listenerExceptionsStayInJavaAndEngineCloseFromAListenerIsRefused() throws Exception {
    Engine engine = TestEnv.engine();
    int[] prompt = TestEnv.tokenizer().encode(PROMPT, false, true);
    try (Options s = Options.fromJson("{\"max_tokens\": 5}")) {
      try (Request r = engine.submit(prompt, s, c -> {
        throw new IllegalArgumentException("boom");
      })) {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> r.await(30_000));
        assertTrue(e.getCause() instanceof IllegalArgumentException);
      }
      List<Throwable> refused = Collections.synchronizedList(new ArrayList<>());
      try (Request r = engine.submit(prompt, s, c -> {
        try {
          engine.close();
        } catch (IllegalStateException expected) {
          refused.add(expected);
        }
      })) {
        assertTrue(r.await(30_000));
      }
      assertFalse(refused.isEmpty());
      // The engine still serves.
      try (Request r = engine.submit(prompt, s)) {
        assertEquals(5, TestEnv.drain(r).tokens().length);
      }
    }
  }

  @Test
  void logprobsAndSeveralCompletionsAreCopied() {
    int[] prompt = TestEnv.tokenizer().encode(PROMPT, false, true);
    try (Options s = Options.fromJson("{\"max_tokens\": 6, \"temperature\": 1, \"seed\": 5, \"n\": 2, "
            + "\"logprobs\": 1, \"top_logprobs\": 3}");
        Request r = TestEnv.engine().submit(prompt, s)) {
      int[] counts = new int[2];
      for (Chunk c : r) {
        int n = c.tokenIds().length;
        counts[c.index()] += n;
        if (n == 0) continue;
        assertNotNull(c.logprobs());
        assertEquals(n, c.logprobs().length);
        assertEquals(3, c.numTopLogprobs());
        assertEquals(3 * n, c.topLogprobIds().length);
        for (float lp : c.logprobs()) assertTrue(lp <= 0.0f);
        // The top alternative is at least as likely as the sampled token.
        for (int k = 0; k < n; k++) assertTrue(c.topLogprobs()[3 * k] >= c.logprobs()[k] - 1e-5f);
      }
      assertArrayEquals(new int[] {6, 6}, counts);
    }
  }

  @Test
  void infoAndMetricsAreJson() {
    Engine engine = TestEnv.engine();
    Map<String, Object> info = MiniJson.object(engine.info());
    assertTrue(TestEnv.number(((Map<?, ?>) info.get("model")).get("vocab_size")) > 1000);
    Map<String, Object> m = MiniJson.object(engine.metrics());
    assertTrue(m.containsKey("kv_blocks_total"), m.toString());
    assertTrue(engine.metricsPrometheus().contains("# TYPE"));
  }
}
