// Recipe: a di_recipe (prompt format, tokenizer, served model names, context budget). Immutable
// and shareable between threads; prepare() turns an API request body into a Prepared.
package ai.deepinfer;

import java.nio.file.Path;
import java.util.Objects;

/** How API requests become DeepSeek prompts for one served model. Thread-safe. */
public final class Recipe implements AutoCloseable {
  static {
    DeepInfer.load();
  }

  private final NativeHandle handle;
  private final java.lang.ref.Cleaner.Cleanable cleanable;

  private Recipe(long ptr) {
    handle = new NativeHandle("Recipe", ptr, Recipe::nDestroy, null);
    cleanable = NativeHandle.CLEANER.register(this, handle);
  }

  /**
   * A recipe tokenizing with {@code tokenizer} (a model directory or tokenizer.json; null: prompt
   * text only, no ids). {@code options} (may be null) holds recipe_* keys.
   */
  public static Recipe create(Path tokenizer, Options options) {
    byte[] path = tokenizer == null ? new byte[0] : DeepInfer.bytes(tokenizer.toString());
    return Options.call(options, o -> new Recipe(nCreate(path, o)));
  }

  /**
   * Validates and renders a request body. A rejected request throws a DeepInferException whose
   * {@link DeepInferException#detail()} is {"status": HTTP status, "body": the API's error body}.
   */
  public Prepared prepare(Protocol protocol, String json) {
    Objects.requireNonNull(protocol, "protocol");
    byte[] body = DeepInfer.bytes(Objects.requireNonNull(json, "json"));
    return handle.call(p -> new Prepared(nPrepare(p, protocol.code(), body)));
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  private static native long nCreate(byte[] tokenizerPath, long options);

  private static native void nDestroy(long p);

  private static native long nPrepare(long p, int protocol, byte[] json);
}
