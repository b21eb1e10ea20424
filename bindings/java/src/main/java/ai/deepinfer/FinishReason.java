// FinishReason: why a completion ended (di_chunk.finish_reason, DI_FINISH_* and the parser's
// DI_PARSE_FINISH_*, which share values).
package ai.deepinfer;

/** Why a completion ended; {@link #NONE} on chunks that are not its last. */
public enum FinishReason {
  NONE(0),
  STOP(1),
  LENGTH(2),
  STOP_SEQUENCE(3),
  CANCELLED(4),
  ERROR(5),
  /** Only as parser input: a filter stopped the output. */
  CONTENT_FILTER(6);

  private final int code;

  FinishReason(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** The reason for a code; an unknown (newer) code reads as {@link #ERROR}. */
  public static FinishReason of(int code) {
    for (FinishReason f : values()) {
      if (f.code == code) return f;
    }
    return ERROR;
  }
}
