// DeepInfer: loads the JNI library (once, with an ABI version check) and exposes the library-wide
// calls: versions, build info, the option schema, status names. Holds no state of its own.
package ai.deepinfer;

import java.nio.charset.StandardCharsets;

/**
 * Library-wide facts. The JNI library {@code libdeepinfer_jni.so} is the system property
 * {@code deepinfer.jni.library} (an absolute path) when set, else the one this jar carries for
 * the platform (extracted to a temporary folder with {@code libdeepinfer.so.1}), else the one on
 * {@code java.library.path}.
 */
public final class DeepInfer {
  private DeepInfer() {}

  static {
    NativeLoader.load();
    int runtime = nAbiVersion();
    int header = nHeaderAbiVersion();
    // A library of another major, or an older minor than the header we were built with, lacks
    // functions this binding calls: refuse it here instead of failing on some later call.
    if (runtime / 10000 != header / 10000 || (runtime / 100) % 100 < (header / 100) % 100) {
      throw new UnsatisfiedLinkError("libdeepinfer ABI " + runtime + " does not serve a binding built for "
          + header);
    }
  }

  /** Makes sure the native library is loaded; every class with native methods calls it first. */
  static void load() {}

  /** The ABI version of the loaded library: major * 10000 + minor * 100 + patch. */
  public static int abiVersion() {
    return nAbiVersion();
  }

  /** The ABI version of the header the JNI layer was compiled against. */
  public static int headerAbiVersion() {
    return nHeaderAbiVersion();
  }

  /** The library's version string, such as "1.0.0 (cpu)". */
  public static String version() {
    return utf8(nVersionString());
  }

  /** A JSON object describing what this build can do (CUDA, threads, ...). */
  public static String buildInfo() {
    return utf8(nBuildInfo());
  }

  /** A JSON array describing every option key (name, type, scope, doc). */
  public static String optionsSchema() {
    return utf8(nOptionsSchema());
  }

  private static volatile LogListener logListener;

  /**
   * Sends the library's log records of {@code maxLevel} ({@link LogListener#ERROR} ..
   * {@link LogListener#DEBUG}) and more severe to {@code listener}, or to stderr when it is null
   * (by default: WARN and more severe, on stderr).
   *
   * @throws DeepInferException DI_E_INVALID_ARG for a level outside the range (the listener is
   *     then unchanged)
   */
  public static void setLogListener(LogListener listener, int maxLevel) {
    LogListener previous = logListener;
    logListener = listener;
    try {
      nSetLog(listener != null, maxLevel);
    } catch (RuntimeException e) {
      logListener = previous;
      throw e;
    }
  }

  // Called by the JNI layer for each record.
  @SuppressWarnings("unused")
  private static void deliverLog(int level, byte[] message) {
    LogListener l = logListener;
    if (l == null) return;
    try {
      l.onLog(level, new String(message, StandardCharsets.UTF_8));
    } catch (Throwable ignored) {
      // A listener's failure must not travel into the engine's thread.
    }
  }

  /** {@code di_status_name}: "DI_OK", "DI_E_INVALID_ARG", ..., "DI_UNKNOWN_STATUS". */
  public static String statusName(int code) {
    return utf8(nStatusName(code));
  }

  static String utf8(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static native void nSetLog(boolean toListener, int maxLevel);

  private static native int nAbiVersion();

  private static native int nHeaderAbiVersion();

  private static native byte[] nVersionString();

  private static native byte[] nBuildInfo();

  private static native byte[] nOptionsSchema();

  private static native byte[] nStatusName(int code);
}
