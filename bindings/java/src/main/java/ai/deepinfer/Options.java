// Options: a di_options bag of typed keyed settings (engine, sampling, recipe keys; see
// DeepInfer.optionsSchema()). Calls are synchronized because di_options is not.
package ai.deepinfer;

import java.util.Objects;
import java.util.function.LongFunction;

/**
 * Typed keyed settings. Unknown keys fail with {@link Status#UNSUPPORTED}, a value of the wrong
 * type with {@link Status#INVALID_ARG}; both messages name the key. The library copies what it
 * needs, so an Options object may be closed (or reused) right after a call that took it.
 */
public final class Options implements AutoCloseable {
  static {
    DeepInfer.load();
  }

  private final NativeHandle handle;
  private final java.lang.ref.Cleaner.Cleanable cleanable;

  public Options() {
    this(nCreate());
  }

  private Options(long ptr) {
    handle = new NativeHandle("Options", ptr, Options::nDestroy, null);
    cleanable = NativeHandle.CLEANER.register(this, handle);
  }

  /** Options from a JSON object {"key": value, ...} (see {@link #update(String)}). */
  public static Options fromJson(String json) {
    Options o = new Options();
    try {
      o.update(json);
    } catch (RuntimeException e) {
      o.close();
      throw e;
    }
    return o;
  }

  /** A deep copy. */
  public synchronized Options copy() {
    return handle.call(p -> new Options(nClone(p)));
  }

  public synchronized Options set(String key, long value) {
    byte[] k = key(key);
    handle.exec(p -> nSetI64(p, k, value));
    return this;
  }

  public synchronized Options set(String key, double value) {
    byte[] k = key(key);
    handle.exec(p -> nSetF64(p, k, value));
    return this;
  }

  public synchronized Options set(String key, String value) {
    byte[] k = key(key);
    byte[] v = DeepInfer.bytes(Objects.requireNonNull(value, "value"));
    handle.exec(p -> nSetStr(p, k, v));
    return this;
  }

  /** Sets a JSON-typed key to a JSON document. */
  public synchronized Options setJson(String key, String json) {
    byte[] k = key(key);
    byte[] v = DeepInfer.bytes(Objects.requireNonNull(json, "json"));
    handle.exec(p -> nSetJson(p, k, v));
    return this;
  }

  /** Sets several keys from a JSON object; all-or-nothing. */
  public synchronized Options update(String json) {
    byte[] v = DeepInfer.bytes(Objects.requireNonNull(json, "json"));
    handle.exec(p -> nUpdateJson(p, v));
    return this;
  }

  /** An int64 key's value; {@link Status#NOT_FOUND} when it is known but unset. */
  public synchronized long getLong(String key) {
    byte[] k = key(key);
    return handle.call(p -> nGetI64(p, k));
  }

  public synchronized double getDouble(String key) {
    byte[] k = key(key);
    return handle.call(p -> nGetF64(p, k));
  }

  public synchronized String getString(String key) {
    byte[] k = key(key);
    return handle.call(p -> DeepInfer.utf8(nGetStr(p, k)));
  }

  /** A JSON key's value as compact JSON text. */
  public synchronized String getJson(String key) {
    byte[] k = key(key);
    return handle.call(p -> DeepInfer.utf8(nGetJson(p, k)));
  }

  /** Every set key as one JSON object. */
  public synchronized String toJson() {
    return handle.call(p -> DeepInfer.utf8(nToJson(p)));
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  /**
   * For other binding classes: {@code f} on the pointer of {@code options} (0 for null), held and
   * locked for the one call that reads it.
   */
  static <T> T call(Options options, LongFunction<T> f) {
    if (options == null) return f.apply(0);
    synchronized (options) {
      return options.handle.call(f);
    }
  }

  private static byte[] key(String key) {
    return DeepInfer.bytes(Objects.requireNonNull(key, "key"));
  }

  private static native long nCreate();

  private static native long nClone(long p);

  private static native void nDestroy(long p);

  private static native void nSetI64(long p, byte[] key, long value);

  private static native void nSetF64(long p, byte[] key, double value);

  private static native void nSetStr(long p, byte[] key, byte[] value);

  private static native void nSetJson(long p, byte[] key, byte[] json);

  private static native void nUpdateJson(long p, byte[] json);

  private static native long nGetI64(long p, byte[] key);

  private static native double nGetF64(long p, byte[] key);

  private static native byte[] nGetStr(long p, byte[] key);

  private static native byte[] nGetJson(long p, byte[] key);

  private static native byte[] nToJson(long p);
}
