// LogListener: receives libdeepinfer's log records (di_log_set); see DeepInfer.setLogListener.
package ai.deepinfer;

/**
 * Receives one log record. Runs on the thread that logged (the one creating an Engine, or an
 * engine's own threads, attached to the VM as daemons), one record at a time; it must not call
 * {@link DeepInfer#setLogListener} and should return quickly. A Throwable it throws is dropped.
 */
@FunctionalInterface
public interface LogListener {
  int ERROR = 0;
  int WARN = 1;
  int INFO = 2;
  int DEBUG = 3;

  /** {@code level}: {@link #ERROR} .. {@link #DEBUG}; {@code message}: one line, no newline. */
  void onLog(int level, String message);
}
