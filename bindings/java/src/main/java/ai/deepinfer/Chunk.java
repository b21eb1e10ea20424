// Chunk: one di_chunk copied into Java (the C pointers are borrowed only until the next poll, so
// the JNI layer copies every array at once). Immutable; text is decoded from UTF-8 bytes here.
package ai.deepinfer;

import java.nio.charset.StandardCharsets;

/** A piece of one completion's output: new token ids, the text they complete, stats. */
public final class Chunk {
  private final int index;
  private final long requestId;
  private final int[] tokenIds;
  private final byte[] text;
  private final float[] logprobs;
  private final int[] topLogprobIds;
  private final float[] topLogprobs;
  private final int numTopLogprobs;
  private final FinishReason finishReason;
  private final int finishCode;
  private final boolean isFinal;
  private final long promptTokens;
  private final long cachedPromptTokens;
  private final long completionTokens;
  private final String errorMessage;

  private Chunk(int index, long requestId, int[] tokenIds, byte[] text, float[] logprobs,
      int[] topLogprobIds, float[] topLogprobs, int numTopLogprobs, int finishCode, boolean isFinal,
      long promptTokens, long cachedPromptTokens, long completionTokens, byte[] errorMessage) {
    this.index = index;
    this.requestId = requestId;
    this.tokenIds = tokenIds;
    this.text = text;
    this.logprobs = logprobs;
    this.topLogprobIds = topLogprobIds;
    this.topLogprobs = topLogprobs;
    this.numTopLogprobs = numTopLogprobs;
    this.finishCode = finishCode;
    this.finishReason = FinishReason.of(finishCode);
    this.isFinal = isFinal;
    this.promptTokens = promptTokens;
    this.cachedPromptTokens = cachedPromptTokens;
    this.completionTokens = completionTokens;
    this.errorMessage = new String(errorMessage, StandardCharsets.UTF_8);
  }

  // Built by the JNI layer for every chunk polled or delivered to a listener.
  static Chunk fromNative(int index, long requestId, int[] tokenIds, byte[] text, float[] logprobs,
      int[] topLogprobIds, float[] topLogprobs, int numTopLogprobs, int finishCode, boolean isFinal,
      long promptTokens, long cachedPromptTokens, long completionTokens, byte[] errorMessage) {
    return new Chunk(index, requestId, tokenIds, text, logprobs, topLogprobIds, topLogprobs,
        numTopLogprobs, finishCode, isFinal, promptTokens, cachedPromptTokens, completionTokens,
        errorMessage);
  }

  /** Which of the request's n completions (0-based). */
  public int index() {
    return index;
  }

  public long requestId() {
    return requestId;
  }

  /** The new token ids (a copy). */
  public int[] tokenIds() {
    return tokenIds.clone();
  }

  /** The text the new tokens complete; never ends inside a character. */
  public String text() {
    return new String(text, StandardCharsets.UTF_8);
  }

  /** The text as the library's UTF-8 bytes (a copy). */
  public byte[] textBytes() {
    return text.clone();
  }

  /** One log-probability per new token, or null when not requested. */
  public float[] logprobs() {
    return logprobs == null ? null : logprobs.clone();
  }

  /** numTokens x numTopLogprobs ids, most likely first; null when none were requested. */
  public int[] topLogprobIds() {
    return topLogprobIds == null ? null : topLogprobIds.clone();
  }

  public float[] topLogprobs() {
    return topLogprobs == null ? null : topLogprobs.clone();
  }

  public int numTopLogprobs() {
    return numTopLogprobs;
  }

  public FinishReason finishReason() {
    return finishReason;
  }

  /** The raw finish code (as the library sent it). */
  int finishCode() {
    return finishCode;
  }

  /** True on the request's very last chunk. */
  public boolean isFinal() {
    return isFinal;
  }

  public long promptTokens() {
    return promptTokens;
  }

  public long cachedPromptTokens() {
    return cachedPromptTokens;
  }

  /** Tokens generated so far by this completion. */
  public long completionTokens() {
    return completionTokens;
  }

  /** With {@link FinishReason#ERROR}: what failed; else "". */
  public String errorMessage() {
    return errorMessage;
  }

  // Raw views for Parser.push(Chunk), which hands the chunk back to the C parser unchanged.
  int[] rawTokenIds() {
    return tokenIds;
  }

  byte[] rawText() {
    return text;
  }

  byte[] rawErrorMessage() {
    return errorMessage.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "Chunk{index=" + index + ", tokens=" + tokenIds.length + ", text=" + text().replace("\n", "\\n")
        + ", finish=" + finishReason + (isFinal ? ", final" : "") + "}";
  }
}
