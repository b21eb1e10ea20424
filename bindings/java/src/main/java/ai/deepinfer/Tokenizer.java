// Tokenizer: a di_tokenizer (Hugging Face tokenizer.json byte-level BPE). Immutable, so calls
// from many threads run concurrently; text crosses as UTF-8 bytes, never as modified UTF-8.
package ai.deepinfer;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/** Encodes and decodes text with the ids of the reference tokenizer. Thread-safe. */
public final class Tokenizer implements AutoCloseable {
  static {
    DeepInfer.load();
  }

  /** One prompt segment: template text (control tokens recognised) or plain content. */
  public record Segment(String text, boolean special) {
    public Segment {
      Objects.requireNonNull(text, "text");
    }
  }

  /**
   * Ids of a segmented prompt and the [begin, end) ranges of ids that came from special
   * segments, flattened: element 2i is a begin, 2i+1 its end.
   */
  public record Encoding(int[] ids, int[] specialRanges) {}

  /** tokenizer_config.json's BOS and EOS ids (-1 when absent) and whether BOS is prepended. */
  public record SpecialIds(int bos, int eos, boolean addBos) {}

  private final NativeHandle handle;
  private final java.lang.ref.Cleaner.Cleanable cleanable;

  private Tokenizer(long ptr) {
    handle = new NativeHandle("Tokenizer", ptr, Tokenizer::nDestroy, null);
    cleanable = NativeHandle.CLEANER.register(this, handle);
  }

  /** Loads a model directory holding tokenizer.json, or a tokenizer.json file. */
  public static Tokenizer load(Path path) {
    return new Tokenizer(nCreate(DeepInfer.bytes(path.toString())));
  }

  /** Encodes text as plain content: "&lt;|im_end|&gt;" typed by a user stays characters. */
  public int[] encode(String text) {
    return encode(text, false, false);
  }

  /**
   * Encodes text. {@code addedTokens}: recognise added/special tokens written in the text;
   * {@code addSpecial}: add the BOS/EOS the post-processor adds.
   */
  public int[] encode(String text, boolean addedTokens, boolean addSpecial) {
    int flags = (addedTokens ? 1 : 0) | (addSpecial ? 2 : 0);
    byte[] bytes = DeepInfer.bytes(Objects.requireNonNull(text, "text"));
    return handle.call(p -> nEncode(p, bytes, flags));
  }

  /** Encodes each segment on its own (see {@link Segment}); no BOS/EOS is added. */
  public Encoding encodeSegments(List<Segment> segments) {
    byte[][] texts = new byte[segments.size()][];
    boolean[] special = new boolean[segments.size()];
    for (int i = 0; i < texts.length; i++) {
      texts[i] = DeepInfer.bytes(segments.get(i).text());
      special[i] = segments.get(i).special();
    }
    int[][] out = new int[2][];
    handle.exec(p -> nEncodeSegments(p, texts, special, out));
    return new Encoding(out[0], out[1]);
  }

  /** Decodes ids to text; bytes that are not valid UTF-8 become U+FFFD. */
  public String decode(int[] ids) {
    return decode(ids, false);
  }

  public String decode(int[] ids, boolean skipSpecial) {
    Objects.requireNonNull(ids, "ids");
    return handle.call(p -> DeepInfer.utf8(nDecode(p, ids, skipSpecial ? 1 : 0)));
  }

  /** The raw bytes a token stands for; possibly part of a UTF-8 character. */
  public byte[] tokenToPiece(int id) {
    return handle.call(p -> nTokenToPiece(p, id));
  }

  /** The id of a token by its tokenizer.json spelling; {@link Status#NOT_FOUND} if none. */
  public int tokenId(String token) {
    byte[] bytes = DeepInfer.bytes(Objects.requireNonNull(token, "token"));
    return handle.call(p -> nTokenId(p, bytes));
  }

  /** The number of ids (largest id + 1). */
  public long vocabSize() {
    return handle.call(Tokenizer::nVocabSize);
  }

  public SpecialIds specialIds() {
    int[] v = handle.call(Tokenizer::nSpecialIds);
    return new SpecialIds(v[0], v[1], v[2] != 0);
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  private static native long nCreate(byte[] path);

  private static native void nDestroy(long p);

  private static native int[] nEncode(long p, byte[] text, int flags);

  private static native void nEncodeSegments(long p, byte[][] texts, boolean[] special, int[][] out);

  private static native byte[] nDecode(long p, int[] ids, int flags);

  private static native byte[] nTokenToPiece(long p, int id);

  private static native int nTokenId(long p, byte[] token);

  private static native long nVocabSize(long p);

  private static native int[] nSpecialIds(long p);
}
