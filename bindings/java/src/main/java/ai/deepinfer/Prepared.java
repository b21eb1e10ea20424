// Prepared: a di_prepared (one validated, rendered, tokenized request). Immutable; every accessor
// copies from the native object, which lives until close().
package ai.deepinfer;

import java.util.function.LongFunction;

/** A prepared request: prompt, token ids, sampling, stops, constraint, parser options. */
public final class Prepared implements AutoCloseable {
  static {
    DeepInfer.load();
  }

  private static final int PROMPT = 0;
  private static final int SAMPLING = 1;
  private static final int STOP = 2;
  private static final int CONSTRAINT = 3;
  private static final int PARSER_OPTIONS = 4;
  private static final int IMAGES = 5;
  private static final int INFO = 6;

  private final NativeHandle handle;
  private final java.lang.ref.Cleaner.Cleanable cleanable;

  Prepared(long ptr) {
    handle = new NativeHandle("Prepared", ptr, Prepared::nDestroy, null);
    cleanable = NativeHandle.CLEANER.register(this, handle);
  }

  /** The rendered prompt text. */
  public String prompt() {
    return text(PROMPT);
  }

  /** The prompt's token ids; null when the recipe has no tokenizer. */
  public int[] tokenIds() {
    return handle.call(Prepared::nTokenIds);
  }

  /** Pairs [begin, end) of ids that came from template text, flattened. */
  public int[] specialRanges() {
    return handle.call(Prepared::nSpecialRanges);
  }

  /** Sampling options as a JSON object of option keys (usable with {@link Options#fromJson}). */
  public String samplingJson() {
    return text(SAMPLING);
  }

  /** The stop strings as a JSON array (the parser applies them). */
  public String stopSequencesJson() {
    return text(STOP);
  }

  /** True when the client asked for a streamed response. */
  public boolean stream() {
    return handle.call(p -> nStream(p) != 0);
  }

  /** The output constraint: {"type": "none" | "json_object" | "json_schema", ...}. */
  public String constraintJson() {
    return text(CONSTRAINT);
  }

  /** The parser options for this request (see {@link Parser#create(String)}). */
  public String parserOptionsJson() {
    return text(PARSER_OPTIONS);
  }

  /** The images the prompt's placeholders stand for, as a JSON array. */
  public String imagesJson() {
    return text(IMAGES);
  }

  /**
   * Image {@code index} (placeholder order) as the model takes it: WebP bytes at the fitted size
   * of {@link #imagesJson()}; null for an index past the last image.
   */
  public byte[] imageData(int index) {
    if (index < 0) return null;
    return handle.call(p -> nImageData(p, index));
  }

  /** {"model", "requested_model", "encoding", "protocol", "prompt_tokens", "thinking"}. */
  public String infoJson() {
    return text(INFO);
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  // For other binding classes: f on the pointer, held for one call.
  <T> T call(LongFunction<T> f) {
    return handle.call(f);
  }

  private String text(int which) {
    return handle.call(p -> DeepInfer.utf8(nText(p, which)));
  }

  private static native void nDestroy(long p);

  private static native byte[] nText(long p, int which);

  private static native int[] nTokenIds(long p);

  private static native int[] nSpecialRanges(long p);

  private static native int nStream(long p);

  private static native byte[] nImageData(long p, int index);
}
