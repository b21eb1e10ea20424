// Protocol: the API a request body follows (DI_PROTOCOL_*).
package ai.deepinfer;

/** The request protocols {@link Recipe#prepare} understands. */
public enum Protocol {
  /** OpenAI POST /v1/chat/completions. */
  CHAT_COMPLETIONS(1),
  /** OpenAI POST /v1/responses. */
  RESPONSES(2),
  /** Anthropic POST /v1/messages. */
  MESSAGES(3);

  private final int code;

  Protocol(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }
}
