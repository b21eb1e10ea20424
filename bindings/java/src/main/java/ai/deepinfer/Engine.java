// Engine: a di_engine (one loaded model, its KV cache and its threads). Submits token ids or
// recipe-prepared requests; reads info and metrics. Every call is thread-safe; close waits for
// calls in flight (the last one out destroys the engine).
package ai.deepinfer;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An inference engine over one model directory (config.json, *.safetensors, tokenizer.json).
 * Requests outlive it safely: closing the engine ends unfinished ones with
 * {@link FinishReason#CANCELLED}.
 */
public final class Engine implements AutoCloseable {
  static {
    DeepInfer.load();
  }

  // Engines still open when the JVM exits are closed by a shutdown hook: their threads must not
  // keep running while the process tears down the library's statics.
  private static final Set<NativeHandle> OPEN = ConcurrentHashMap.newKeySet();

  static {
    Thread hook = new Thread(() -> {
      for (NativeHandle h : OPEN) h.run();
    }, "deepinfer-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  private final NativeHandle handle;
  private final java.lang.ref.Cleaner.Cleanable cleanable;
  private final Path modelDir;
  private Tokenizer tokenizer; // the model's, loaded by the first text submit (guarded by this)
  private boolean closed;

  private Engine(long ptr, Path modelDir) {
    this.modelDir = modelDir;
    NativeHandle h = new NativeHandle("Engine", ptr, Engine::destroy, null);
    handle = h;
    OPEN.add(h);
    // Captures the handle only, never this Engine.
    cleanable = NativeHandle.CLEANER.register(this, () -> {
      h.run();
      OPEN.remove(h);
    });
  }

  /** Loads {@code modelDir} with default engine options. */
  public static Engine open(Path modelDir) {
    return open(modelDir, null);
  }

  /** Loads {@code modelDir}; {@code options} (may be null) holds engine-scope keys. */
  public static Engine open(Path modelDir, Options options) {
    byte[] dir = DeepInfer.bytes(modelDir.toString());
    return Options.call(options, o -> new Engine(nCreate(dir, o), modelDir));
  }

  /**
   * Submits a text prompt, encoded as the Python and Go bindings encode one: control tokens
   * written in the text are recognised and the BOS {@code tokenizer_config.json} asks for is
   * added (the ids of {@code deepinfer tokenize --add-special}; {@link Tokenizer#encode(String)}
   * instead encodes user content, as plain characters without BOS).
   */
  public Request submit(String prompt, Options sampling) {
    return submitIds(promptIds(prompt), sampling, null);
  }

  /** As {@link #submit(String, Options)}, delivering chunks to {@code listener}. */
  public Request submit(String prompt, Options sampling, ChunkListener listener) {
    return submitIds(promptIds(prompt), sampling, Objects.requireNonNull(listener, "listener"));
  }

  private synchronized int[] promptIds(String prompt) {
    Objects.requireNonNull(prompt, "prompt");
    if (closed) throw new IllegalStateException("Engine is closed");
    if (tokenizer == null) tokenizer = Tokenizer.load(modelDir);
    return tokenizer.encode(prompt, true, true);
  }

  /** Submits a prompt of token ids; iterate or poll the returned request for its chunks. */
  public Request submit(int[] promptIds, Options sampling) {
    return submitIds(promptIds, sampling, null);
  }

  /** Submits a prompt whose chunks go to {@code listener} on the engine's output thread. */
  public Request submit(int[] promptIds, Options sampling, ChunkListener listener) {
    return submitIds(promptIds, sampling, Objects.requireNonNull(listener, "listener"));
  }

  /** Submits a recipe-prepared request (its ids and sampling options). */
  public Request submit(Prepared prepared) {
    return submitPrepared(prepared, null);
  }

  public Request submit(Prepared prepared, ChunkListener listener) {
    return submitPrepared(prepared, Objects.requireNonNull(listener, "listener"));
  }

  /** A JSON object: the model, the limits in force, the device. */
  public String info() {
    return handle.call(p -> DeepInfer.utf8(nInfo(p)));
  }

  /** Metrics as one JSON object (queues, KV use, prefix-cache hits, latencies). */
  public String metrics() {
    return metrics(0);
  }

  /** Metrics in the Prometheus text exposition format. */
  public String metricsPrometheus() {
    return metrics(1);
  }

  private String metrics(int format) {
    return handle.call(p -> DeepInfer.utf8(nMetrics(p, format)));
  }

  /**
   * Cancels unfinished requests, joins the engine's threads, frees the model. Idempotent. Not
   * allowed from a {@link ChunkListener} (the engine would wait for its own thread).
   */
  @Override
  public void close() {
    if (ChunkSink.onEngineThread()) {
      throw new IllegalStateException("Engine.close: not allowed from a ChunkListener");
    }
    synchronized (this) {
      closed = true;
      if (tokenizer != null) tokenizer.close();
    }
    cleanable.clean();
  }

  private Request submitIds(int[] ids, Options sampling, ChunkListener listener) {
    Objects.requireNonNull(ids, "promptIds");
    return submitWith(listener, (p, sink) -> Options.call(sampling, o -> newRequest(nSubmit(p, ids, o, sink), sink)));
  }

  private Request submitPrepared(Prepared prepared, ChunkListener listener) {
    Objects.requireNonNull(prepared, "prepared");
    return submitWith(listener, (p, sink) -> prepared.call(pp -> newRequest(nSubmitPrepared(p, pp, sink), sink)));
  }

  private interface Submit {
    Request apply(long engine, ChunkSink sink);
  }

  // Both submits: the engine held for the call, and a listener's sink abandoned when the submit
  // fails (no chunk will ever reach it).
  private Request submitWith(ChunkListener listener, Submit submit) {
    ChunkSink sink = listener == null ? null : new ChunkSink(listener);
    try {
      return handle.call(p -> submit.apply(p, sink));
    } catch (RuntimeException | Error e) {
      if (sink != null) sink.abandon();
      throw e;
    }
  }

  private Request newRequest(long ptr, ChunkSink sink) {
    return new Request(this, ptr, sink);
  }

  // The destroy joins the engine's threads, so it must not run on one of them: a listener that
  // drops the last use of a closed engine hands the destroy to a short-lived thread.
  private static void destroy(long ptr) {
    if (ChunkSink.onEngineThread()) {
      Thread t = new Thread(() -> nDestroy(ptr), "deepinfer-engine-close");
      t.setDaemon(true);
      t.start();
    } else {
      nDestroy(ptr);
    }
  }

  private static native long nCreate(byte[] modelDir, long options);

  private static native void nDestroy(long p);

  private static native long nSubmit(long p, int[] ids, long sampling, ChunkSink sink);

  private static native long nSubmitPrepared(long p, long prepared, ChunkSink sink);

  private static native byte[] nInfo(long p);

  private static native byte[] nMetrics(long p, int format);
}
