// DeepInferException: a negative di_status with the di_error's message and JSON detail. Thrown
// by every binding call that fails; built by the JNI layer through fromNative only.
package ai.deepinfer;

import java.nio.charset.StandardCharsets;

/**
 * A DeepInfer error: its {@link Status}, the library's message (it names the field or key at
 * fault) and the optional JSON detail. For a request the recipe rejects, the detail is
 * {@code {"status": <HTTP status>, "body": <the API's error body>}}, ready for the client.
 */
public class DeepInferException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status status;
  private final int code;
  private final String detail;

  public DeepInferException(Status status, String message) {
    this(status, status.code(), message, "");
  }

  DeepInferException(Status status, int code, String message, String detail) {
    super(status.cName() + ": " + message);
    this.status = status;
    this.code = code;
    this.detail = detail;
  }

  /** The status, {@link Status#UNKNOWN} for a code newer than this binding. */
  public Status status() {
    return status;
  }

  /** The raw {@code di_status} value. */
  public int code() {
    return code;
  }

  /** The library's message alone (without the status prefix {@link #getMessage()} carries). */
  public String errorMessage() {
    String m = getMessage();
    return m.substring(m.indexOf(": ") + 2);
  }

  /** The error's JSON detail, "" when it has none. */
  public String detail() {
    return detail;
  }

  // Called from native code with the di_error's fields as raw UTF-8 bytes (never through
  // NewStringUTF, which takes modified UTF-8 and aborts on 4-byte characters under -Xcheck:jni).
  static DeepInferException fromNative(int code, byte[] message, byte[] detail) {
    return new DeepInferException(Status.of(code), code,
        new String(message, StandardCharsets.UTF_8), new String(detail, StandardCharsets.UTF_8));
  }
}
