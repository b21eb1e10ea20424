// ChunkListener: receives a request's chunks on the engine's output thread (callback mode).
package ai.deepinfer;

/**
 * Receives every chunk of a request submitted with a listener. Runs on the engine's output
 * thread (a daemon thread attached to the JVM once): keep it short. It may cancel or close
 * requests; it must not close the engine (that is refused with IllegalStateException). An
 * exception it throws stops further delivery and is reported by {@link Request#await}.
 */
@FunctionalInterface
public interface ChunkListener {
  void onChunk(Chunk chunk);
}
