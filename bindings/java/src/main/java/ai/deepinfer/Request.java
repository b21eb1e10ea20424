// Request: a di_request. Polled requests are an Iterator<Chunk> (one poller at a time, polling in
// short slices so Thread.interrupt cancels); callback requests deliver to a ChunkListener. close()
// from any thread cancels, and the handle is destroyed once no poll is in flight.
package ai.deepinfer;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One submitted request (all its completions). Use it in try-with-resources; a Cleaner destroys
 * (and so cancels) a request that was never closed once it becomes unreachable.
 */
public final class Request implements AutoCloseable, Iterator<Chunk>, Iterable<Chunk> {
  static {
    DeepInfer.load();
  }

  // Short native waits: an interrupt or a close from another thread is seen within one slice
  // even if the engine were slow to deliver the cancelled chunk.
  private static final int SLICE_MS = 50;

  @SuppressWarnings("unused")  // keeps the engine reachable (not collected and closed) while we are
  private final Engine engine;
  private final NativeHandle handle;
  private final java.lang.ref.Cleaner.Cleanable cleanable;
  private final ChunkSink sink;
  private final long id;
  private final ReentrantLock pollLock = new ReentrantLock();
  private Chunk pending;
  private boolean ended;
  private boolean cancelledByInterrupt;

  Request(Engine engine, long ptr, ChunkSink sink) {
    this.engine = engine;
    this.sink = sink;
    this.id = nId(ptr);
    handle = new NativeHandle("Request", ptr, Request::nDestroy, Request::cancelQuietly);
    cleanable = NativeHandle.CLEANER.register(this, handle);
  }

  /** The engine-wide request id (as in {@link Chunk#requestId()}). */
  public long id() {
    return id;
  }

  /**
   * The next chunk, waiting up to {@code timeoutMs} (negative: forever). Returns null on a
   * timeout and at the end of the stream ({@link #isDone()} tells which). An interrupt of the
   * polling thread cancels the request; the interrupt flag stays set.
   */
  public Chunk poll(long timeoutMs) {
    lockForPolling();
    try {
      if (pending != null) {
        Chunk c = pending;
        pending = null;
        return c;
      }
      return pollLocked(timeoutMs);
    } finally {
      pollLock.unlock();
    }
  }

  /** True once the last chunk was taken or the request was closed. */
  public boolean isDone() {
    lockForPolling();
    try {
      return pending == null && (ended || handle.isClosed());
    } finally {
      pollLock.unlock();
    }
  }

  @Override
  public boolean hasNext() {
    lockForPolling();
    try {
      if (pending == null && !ended) pending = pollLocked(-1);
      return pending != null;
    } finally {
      pollLock.unlock();
    }
  }

  @Override
  public Chunk next() {
    lockForPolling();
    try {
      if (!hasNext()) throw new NoSuchElementException("the request has no more chunks");
      Chunk c = pending;
      pending = null;
      return c;
    } finally {
      pollLock.unlock();
    }
  }

  /** This request itself (it can be iterated once). */
  @Override
  public Iterator<Chunk> iterator() {
    return this;
  }

  /** Asks the engine to end the request early; its completions end with CANCELLED. Idempotent. */
  public void cancel() {
    long p;
    try {
      p = handle.acquire();
    } catch (IllegalStateException closed) {
      return;  // closing already cancelled it
    }
    try {
      nCancel(p);
    } finally {
      handle.release();
    }
  }

  /**
   * For a request submitted with a listener: waits until its final chunk was delivered.
   * Returns false on timeout. Throws IllegalStateException when the listener threw.
   */
  public boolean await(long timeoutMs) throws InterruptedException {
    if (sink == null) throw new IllegalStateException("Request.await: this request is polled, not a listener's");
    return sink.await(timeoutMs);
  }

  /** Cancels an unfinished request and releases it. Any thread; idempotent. */
  @Override
  public void close() {
    cleanable.clean();
  }

  private void lockForPolling() {
    if (sink != null) throw new IllegalStateException("this request delivers its chunks to a ChunkListener");
    if (!pollLock.tryLock()) {
      throw new IllegalStateException("another thread is polling this request");
    }
  }

  private Chunk pollLocked(long timeoutMs) {
    final long deadline = timeoutMs < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMs * 1_000_000L;
    Chunk[] out = new Chunk[1];
    while (!ended) {
      if (!cancelledByInterrupt && Thread.currentThread().isInterrupted()) {
        cancelledByInterrupt = true;
        cancel();
      }
      long remainingMs = timeoutMs < 0 ? SLICE_MS : Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
      int slice = (int) Math.min(SLICE_MS, remainingMs);
      long p;
      try {
        p = handle.acquire();
      } catch (IllegalStateException closed) {
        ended = true;
        return null;
      }
      int st;
      try {
        st = nPoll(p, slice, out);
      } finally {
        handle.release();
      }
      if (st == Status.OK.code()) return out[0];
      if (st == Status.END_OF_STREAM.code()) {
        ended = true;
        return null;
      }
      if (timeoutMs >= 0 && System.nanoTime() >= deadline) return null;  // DI_TIMEOUT
    }
    return null;
  }

  private static void cancelQuietly(long ptr) {
    nCancel(ptr);
  }

  private static native long nId(long p);

  private static native int nPoll(long p, int timeoutMs, Chunk[] out);

  private static native void nCancel(long p);

  private static native void nDestroy(long p);
}
