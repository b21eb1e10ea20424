// Status: the C ABI's di_status codes as a Java enum. Names drop the "DI_" / "DI_E_" prefix;
// cName() gives the C name back (a test compares it with di_status_name for every code).
package ai.deepinfer;

/** A {@code di_status}: zero is success, positive values are outcomes, negative values errors. */
public enum Status {
  OK(0),
  TIMEOUT(1),
  END_OF_STREAM(2),
  AGAIN(3), // reserved: no 1.x call returns it
  BUFFER_TOO_SMALL(4), // reserved: no 1.x call returns it
  INVALID_ARG(-1),
  OOM(-2),
  UNSUPPORTED(-3),
  NOT_FOUND(-4),
  IO(-5),
  PARSE(-6),
  CANCELLED(-7),
  INTERNAL(-8),
  LIMIT(-9),
  STATE(-10),
  DEVICE(-11),
  PERMISSION(-12),
  /** A code this binding does not know (a newer library); {@link DeepInferException#code()} has it. */
  UNKNOWN(Integer.MIN_VALUE);

  private final int code;

  Status(int code) {
    this.code = code;
  }

  /** The numeric {@code di_status} value ({@code Integer.MIN_VALUE} for {@link #UNKNOWN}). */
  public int code() {
    return code;
  }

  /** True for error codes (negative values). */
  public boolean isError() {
    return code < 0;
  }

  /** The C name, e.g. {@code "DI_E_INVALID_ARG"}, as {@code di_status_name} spells it. */
  public String cName() {
    if (this == UNKNOWN) return "DI_UNKNOWN_STATUS";
    return (code < 0 ? "DI_E_" : "DI_") + name();
  }

  /** The enum value for a numeric code; {@link #UNKNOWN} for codes this binding does not know. */
  public static Status of(int code) {
    for (Status s : values()) {
      if (s.code == code && s != UNKNOWN) return s;
    }
    return UNKNOWN;
  }
}
