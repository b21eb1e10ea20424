// NativeHandle: the owner of one C handle (a long) shared by a binding object and its Cleaner.
// Calls bracket their native use with acquire/release; close waits for no one: when a call is in
// flight it marks the handle closed (optionally cancelling it) and the last call out destroys it.
package ai.deepinfer;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Runs as the Cleaner action, so it must never reference the object it belongs to; that object
 * may become unreachable while a native call on the handle is still running, which is safe here
 * because such a call holds the handle (users &gt; 0) and the destroy waits for it.
 */
final class NativeHandle implements Runnable {
  interface Op {
    void apply(long ptr);
  }

  static final Cleaner CLEANER = Cleaner.create();

  private final String what;
  private final Op destroy;
  private final Op onBusyClose;  // runs under the lock while a call is in flight; may be null
  private long ptr;
  private int users;
  private boolean closed;

  NativeHandle(String what, long ptr, Op destroy, Op onBusyClose) {
    this.what = what;
    this.ptr = ptr;
    this.destroy = destroy;
    this.onBusyClose = onBusyClose;
  }

  /** The pointer for one call; pair with {@link #release()} in a finally block. */
  synchronized long acquire() {
    if (closed) throw new IllegalStateException(what + " is closed");
    users++;
    return ptr;
  }

  void release() {
    long p = 0;
    synchronized (this) {
      if (--users == 0 && closed) {
        p = ptr;
        ptr = 0;
      }
    }
    if (p != 0) destroy.apply(p);
  }

  /** {@code f} on the pointer, held for the call: the acquire/release bracket of every method. */
  <T> T call(LongFunction<T> f) {
    long p = acquire();
    try {
      return f.apply(p);
    } finally {
      release();
    }
  }

  /** {@link #call} for a call without a result. */
  void exec(LongConsumer f) {
    long p = acquire();
    try {
      f.accept(p);
    } finally {
      release();
    }
  }

  synchronized boolean isClosed() {
    return closed;
  }

  /** Close (also the Cleaner action): destroys now, or marks closed for the last caller. */
  @Override
  public void run() {
    long p = 0;
    synchronized (this) {
      if (closed) return;
      closed = true;
      if (users == 0) {
        p = ptr;
        ptr = 0;
      } else if (onBusyClose != null) {
        onBusyClose.apply(ptr);
      }
    }
    if (p != 0) destroy.apply(p);
  }
}
