// ChunkSink: what the JNI layer holds (as a global ref) for a callback-mode request. It calls
// the user's listener on the engine thread, keeps every Throwable on the Java side (nothing may
// propagate back into the engine's C++ thread) and signals the final chunk.
package ai.deepinfer;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

final class ChunkSink {
  private static final ThreadLocal<Boolean> ON_ENGINE_THREAD = new ThreadLocal<>();

  private final ChunkListener listener;
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile Throwable error;

  ChunkSink(ChunkListener listener) {
    this.listener = listener;
  }

  /** True while the current thread runs a listener (closing the engine there would deadlock). */
  static boolean onEngineThread() {
    return ON_ENGINE_THREAD.get() != null;
  }

  // Called by native code for each chunk.
  void accept(Chunk chunk) {
    ON_ENGINE_THREAD.set(Boolean.TRUE);
    try {
      if (error == null) listener.onChunk(chunk);
    } catch (Throwable t) {
      error = t;
    } finally {
      ON_ENGINE_THREAD.remove();
      if (chunk.isFinal()) done.countDown();
    }
  }

  // Called by native code when a chunk could not be built (out of memory in the JVM).
  void lost(boolean isFinal) {
    if (error == null) error = new OutOfMemoryError("a chunk could not be copied into the JVM");
    if (isFinal) done.countDown();
  }

  // Called when the submit failed: no chunk will ever come.
  void abandon() {
    done.countDown();
  }

  boolean await(long timeoutMs) throws InterruptedException {
    boolean ok = timeoutMs < 0 ? awaitForever() : done.await(timeoutMs, TimeUnit.MILLISECONDS);
    Throwable t = error;
    if (ok && t != null) throw new IllegalStateException("the chunk listener failed: " + t, t);
    return ok;
  }

  private boolean awaitForever() throws InterruptedException {
    done.await();
    return true;
  }
}
