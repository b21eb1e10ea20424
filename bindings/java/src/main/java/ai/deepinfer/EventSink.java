// EventSink: the JNI layer's target for parser events. Decodes the UTF-8 bytes and calls the
// listener; keeps any Throwable on the Java side and rethrows it after the native call returns.
package ai.deepinfer;

import java.nio.charset.StandardCharsets;

final class EventSink {
  private final ParserListener listener;
  private Throwable error;

  EventSink(ParserListener listener) {
    this.listener = listener;
  }

  // Called by native code for each event.
  void accept(byte[] event, byte[] data) {
    if (error != null) return;
    try {
      listener.onEvent(new ParserEvent(new String(event, StandardCharsets.UTF_8),
          new String(data, StandardCharsets.UTF_8)));
    } catch (Throwable t) {
      error = t;
    }
  }

  void rethrow() {
    Throwable t = error;
    if (t == null) return;
    if (t instanceof RuntimeException r) throw r;
    if (t instanceof Error e) throw e;
    throw new IllegalStateException("the parser listener failed: " + t, t);
  }
}
