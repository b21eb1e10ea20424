// ParserListener: receives a Parser's events, synchronously on the thread that pushes.
package ai.deepinfer;

/** Receives events during {@link Parser#push} / {@link Parser#finish}, on the caller's thread. */
@FunctionalInterface
public interface ParserListener {
  void onEvent(ParserEvent event);
}
