// Ending requests from other threads: close() and cancel() from another thread end a long
// generation promptly, an interrupt of the polling thread cancels, a second poller is refused,
// and forgotten requests are destroyed (and their KV blocks freed) by the Cleaner.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class CancelTest {
  // As long as the tiny model allows: minutes of work even on a fast machine, so it cannot
  // finish on its own during a test.
  static final String LONG = "{\"max_tokens\": 16000, \"ignore_eos\": 1, \"temperature\": 1, \"seed\": 1}";
  // "Promptly": one engine step plus a wake-up, with room for a loaded CI machine; a cancel that
  // did not work would run the whole LONG generation instead.
  static final long PROMPT_END_MS = 10_000;

  private static int[] prompt() {
    return TestEnv.tokenizer().encode(EngineTest.PROMPT, false, true);
  }

  /** Iterates `r` on another thread; returns when it saw the first chunk. */
  private static CompletableFuture<Chunk> consume(Request r, CountDownLatch first) {
    return CompletableFuture.supplyAsync(() -> {
      Chunk last = null;
      for (Chunk c : r) {
        last = c;
        first.countDown();
      }
      return last;
    });
  }

  static void waitUntilIdle(Engine engine) throws InterruptedException {
    Map<String, Object> m = null;
    // Returns as soon as the engine is idle; the deadline only absorbs a slow, loaded machine.
    for (long deadline = System.nanoTime() + 60_000_000_000L; System.nanoTime() < deadline; ) {
      m = MiniJson.object(engine.metrics());
      if (TestEnv.number(m.get("kv_blocks_free")) == TestEnv.number(m.get("kv_blocks_total"))
          && TestEnv.number(m.get("requests_finished")) == TestEnv.number(m.get("requests_submitted"))
          && TestEnv.number(m.get("num_requests_running")) == 0) return;
      Thread.sleep(10);
    }
    throw new AssertionError("the engine did not become idle: " + m);
  }

  @Test
  void closeFromAnotherThreadEndsAPollingConsumerPromptly() throws Exception {
    try (Options s = Options.fromJson(LONG)) {
      Request r = TestEnv.engine().submit(prompt(), s);
      CountDownLatch first = new CountDownLatch(1);
      CompletableFuture<Chunk> consumer = consume(r, first);
      assertTrue(first.await(30, TimeUnit.SECONDS));
      long t0 = System.nanoTime();
      r.close();
      Chunk last = consumer.get(PROMPT_END_MS, TimeUnit.MILLISECONDS);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(ms < PROMPT_END_MS, "took " + ms + " ms");
      assertNotNull(last);
      assertFalse(last.finishReason() == FinishReason.LENGTH);
      assertTrue(r.isDone());
      r.close();  // idempotent
    }
    waitUntilIdle(TestEnv.engine());
  }

  @Test
  void cancelFromAnotherThreadEndsWithACancelledChunk() throws Exception {
    try (Options s = Options.fromJson(LONG); Request r = TestEnv.engine().submit(prompt(), s)) {
      CountDownLatch first = new CountDownLatch(1);
      CompletableFuture<Chunk> consumer = consume(r, first);
      assertTrue(first.await(30, TimeUnit.SECONDS));
      r.cancel();
      r.cancel();
      Chunk last = consumer.get(PROMPT_END_MS, TimeUnit.MILLISECONDS);
      assertEquals(FinishReason.CANCELLED, last.finishReason());
      assertTrue(last.isFinal());
    }
    waitUntilIdle(TestEnv.engine());
  }

  @Test
  void interruptingThePollingThreadCancels() throws Exception {
    try (Options s = Options.fromJson(LONG); Request r = TestEnv.engine().submit(prompt(), s)) {
      AtomicReference<Chunk> last = new AtomicReference<>();
      CountDownLatch first = new CountDownLatch(1);
      Thread t = new Thread(() -> {
        for (Chunk c : r) {
          last.set(c);
          first.countDown();
        }
      });
      t.start();
      assertTrue(first.await(30, TimeUnit.SECONDS));
      t.interrupt();
      t.join(PROMPT_END_MS);
      assertFalse(t.isAlive());
      assertEquals(FinishReason.CANCELLED, last.get().finishReason());
    }
  }

  // Not the common pool: on a 2-core machine it has one thread, which another test may still hold.
  private static void onNewDaemonThread(Runnable r) {
    Thread t = new Thread(r, "second-poller");
    t.setDaemon(true);
    t.start();
  }

  @Test
  void aSecondPollerIsRefused() throws Exception {
    // One sequence slot: `blocker` runs while `queued` waits, so the consumer of `queued` sits in
    // a poll that cannot return until `blocker` ends. Racing a consumer of a running request
    // instead is flaky: it leaves the lock between chunks, and may finish before it is caught.
    try (Options engineOptions = new Options().set("max_num_seqs", 1L);
        Engine e = Engine.open(TestEnv.model(), engineOptions);
        Options s = Options.fromJson(LONG);
        Request blocker = e.submit(prompt(), s)) {
      assertNotNull(blocker.poll(30_000));
      try (Request queued = e.submit(prompt(), s)) {
        // Our probe and the consumer both use tryLock, so whichever comes second is refused: a
        // consumer that lost to a probe ends with IllegalStateException and is started again.
        CompletableFuture<Chunk> consumer = null;
        boolean refused = false;
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!refused && System.nanoTime() < deadline) {
          if (consumer == null || consumer.isCompletedExceptionally()) {
            CountDownLatch started = new CountDownLatch(1);
            consumer = CompletableFuture.supplyAsync(() -> {
              started.countDown();
              return queued.poll(60_000);
            }, CancelTest::onNewDaemonThread);
            assertTrue(started.await(30, TimeUnit.SECONDS));
            Thread.sleep(20);  // give it a head start to the lock
          }
          assertFalse(consumer.isDone() && !consumer.isCompletedExceptionally(), "queued produced a chunk while blocked");
          try {
            queued.poll(0);
            Thread.sleep(1);
          } catch (IllegalStateException expected) {
            refused = true;
          }
        }
        assertTrue(refused);
        assertFalse(consumer.isDone());
        blocker.cancel();
        queued.close();
        consumer.get(PROMPT_END_MS, TimeUnit.MILLISECONDS);
      }
    }
  }

  @Test
  void pollTimesOutWithNull() throws Exception {
    try (Options s = Options.fromJson("{\"max_tokens\": 2}"); Request r = TestEnv.engine().submit(prompt(), s)) {
      int chunks = 0;
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (!r.isDone() && System.nanoTime() < deadline) {
        Chunk c = r.poll(1);
        if (c != null) chunks++;
      }
      assertTrue(r.isDone());
      assertTrue(chunks >= 1);
      assertEquals(null, r.poll(5));
      assertFalse(r.hasNext());
      assertThrows(java.util.NoSuchElementException.class, r::next);
    }
  }

  @Test
  void forgottenRequestsAreCancelledByTheCleaner() throws Exception {
    Engine engine = TestEnv.engine();
    try (Options s = Options.fromJson(LONG)) {
      for (int i = 0; i < 4; i++) engine.submit(prompt(), s);  // never closed
    }
    // Returns as soon as the Cleaner did its work; the deadline only absorbs a slow machine.
    for (long deadline = System.nanoTime() + 60_000_000_000L; System.nanoTime() < deadline; ) {
      System.gc();
      Map<String, Object> m = MiniJson.object(engine.metrics());
      // Finished (any reason) = submitted: a request not yet scheduled counts as neither running
      // nor waiting, so those two alone read idle right after the submits.
      if (TestEnv.number(m.get("requests_finished")) == TestEnv.number(m.get("requests_submitted"))
          && TestEnv.number(m.get("num_requests_running")) == 0 && TestEnv.number(m.get("num_requests_waiting")) == 0
          && TestEnv.number(m.get("kv_blocks_free")) == TestEnv.number(m.get("kv_blocks_total"))) return;
      Thread.sleep(20);
    }
    throw new AssertionError("unreachable requests still run: " + engine.metrics());
  }
}
