// ParserEvent: one protocol event, ready for SSE (`event: <event>` when non-empty, `data: <data>`).
package ai.deepinfer;

/** One streaming event: {@code event} is "" for Chat Completions; {@code data} is JSON or "[DONE]". */
public record ParserEvent(String event, String data) {
  /** The event as Server-Sent Events text, ending with a blank line. */
  public String toSse() {
    return (event.isEmpty() ? "" : "event: " + event + "\n") + "data: " + data + "\n\n";
  }
}
