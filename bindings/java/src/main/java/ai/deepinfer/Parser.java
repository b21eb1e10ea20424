// Parser: a di_parser (model output -> one API's streaming events and final response). One stream
// per parser; calls are synchronized because the C parser is single-threaded.
package ai.deepinfer;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Turns one completion's output into its API's events (reasoning, text, tool calls, stop
 * sequences) and the final response body. Feed engine chunks with {@link #push(Chunk,
 * ParserListener)} or raw text with {@link #push(byte[], int[], FinishReason, ParserListener)}.
 */
public final class Parser implements AutoCloseable {
  static {
    DeepInfer.load();
  }

  private final NativeHandle handle;
  private final java.lang.ref.Cleaner.Cleanable cleanable;
  private boolean ended;

  private Parser(long ptr) {
    handle = new NativeHandle("Parser", ptr, Parser::nDestroy, null);
    cleanable = NativeHandle.CLEANER.register(this, handle);
  }

  /** A parser from its options JSON (protocol, encoding, tools, stop, stream, ...; all optional). */
  public static Parser create(String optionsJson) {
    return new Parser(nCreate(DeepInfer.bytes(Objects.requireNonNull(optionsJson, "optionsJson"))));
  }

  /** The parser a prepared request asks for (its tokenizer places control tokens by id). */
  public static Parser forRequest(Prepared prepared) {
    return forRequest(prepared, null);
  }

  /**
   * As {@link #forRequest(Prepared)}, with {@code overridesJson} (may be null): keys of
   * {@link #create(String)} that replace the prepared values, e.g. {"request_id": "..."}.
   */
  public static Parser forRequest(Prepared prepared, String overridesJson) {
    Objects.requireNonNull(prepared, "prepared");
    byte[] overrides = overridesJson == null ? new byte[0] : DeepInfer.bytes(overridesJson);
    return prepared.call(pp -> new Parser(nCreateForPrepared(pp, overrides)));
  }

  /**
   * Feeds one engine chunk; {@code listener} (may be null) receives the events it completes.
   * Returns true once the stream's terminal event has been delivered.
   */
  public synchronized boolean push(Chunk chunk, ParserListener listener) {
    Objects.requireNonNull(chunk, "chunk");
    EventSink sink = listener == null ? null : new EventSink(listener);
    int st = handle.call(p -> nPushChunk(p, chunk.index(), chunk.requestId(), chunk.rawTokenIds(),
        chunk.rawText(), chunk.finishCode(), chunk.isFinal(), chunk.promptTokens(),
        chunk.cachedPromptTokens(), chunk.completionTokens(), chunk.rawErrorMessage(), sink));
    return done(st, sink);
  }

  /**
   * Feeds raw model output: {@code text} as UTF-8 bytes (a character may be split between pushes;
   * invalid bytes become U+FFFD), {@code tokenIds} (may be null) so control tokens are known by
   * id, and the finish reason ({@link FinishReason#NONE} while output goes on).
   */
  public synchronized boolean push(byte[] text, int[] tokenIds, FinishReason finish, ParserListener listener) {
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(finish, "finish");
    EventSink sink = listener == null ? null : new EventSink(listener);
    int[] ids = tokenIds == null ? new int[0] : tokenIds;
    int st = handle.call(p -> nPush(p, text, ids, finish.code(), -1, -1, -1, new byte[0], sink));
    return done(st, sink);
  }

  /** {@link #push(byte[], int[], FinishReason, ParserListener)} for text. */
  public boolean push(String text, FinishReason finish, ParserListener listener) {
    return push(DeepInfer.bytes(text), null, finish, listener);
  }

  /** Feeds one chunk and returns its events. */
  public List<ParserEvent> push(Chunk chunk) {
    List<ParserEvent> events = new ArrayList<>();
    push(chunk, events::add);
    return events;
  }

  /** Ends the output without a finish reason from the engine and delivers the rest. */
  public synchronized void finish(ParserListener listener) {
    EventSink sink = listener == null ? null : new EventSink(listener);
    done(handle.call(p -> nFinish(p, sink)), sink);
  }

  /** True once the terminal event was delivered. */
  public synchronized boolean isEnded() {
    return ended;
  }

  /**
   * The non-streaming response body (or the API's error body when the stream failed); the
   * output must have ended ({@link Status#STATE} otherwise).
   */
  public synchronized String response() {
    return handle.call(p -> DeepInfer.utf8(nResponse(p)));
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  private boolean done(int status, EventSink sink) {
    if (status == Status.END_OF_STREAM.code()) ended = true;
    if (sink != null) sink.rethrow();
    return ended;
  }

  private static native long nCreate(byte[] optionsJson);

  private static native long nCreateForPrepared(long prepared, byte[] overridesJson);

  private static native void nDestroy(long p);

  private static native int nPush(long p, byte[] text, int[] ids, int finish, long promptTokens,
      long cachedPromptTokens, long completionTokens, byte[] errorMessage, EventSink sink);

  private static native int nPushChunk(long p, int index, long requestId, int[] ids, byte[] text,
      int finish, boolean isFinal, long promptTokens, long cachedPromptTokens, long completionTokens,
      byte[] errorMessage, EventSink sink);

  private static native int nFinish(long p, EventSink sink);

  private static native byte[] nResponse(long p);
}
