// TestEnv: what the suite script passes as system properties (the tiny model, the CLI, the ABI
// export list, the JNI library), a shared engine, helpers to drain requests and read RSS.
package ai.deepinfer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

final class TestEnv {
  private TestEnv() {}

  static Path model() {
    return Path.of(require("deepinfer.test.model"));
  }

  static Path cli() {
    return Path.of(require("deepinfer.test.cli"));
  }

  static Path exports() {
    return Path.of(require("deepinfer.test.exports"));
  }

  static Path jniLibrary() {
    return Path.of(require("deepinfer.jni.library"));
  }

  private static String require(String key) {
    String v = System.getProperty(key);
    if (v == null || v.isEmpty()) throw new IllegalStateException("system property " + key + " is not set");
    return v;
  }

  private static Engine engine;
  private static Tokenizer tokenizer;
  private static Recipe recipe;

  /** One engine for the tests that do not need their own (loading is the slow part). */
  static synchronized Engine engine() {
    if (engine == null) engine = Engine.open(model());
    return engine;
  }

  static synchronized Tokenizer tokenizer() {
    if (tokenizer == null) tokenizer = Tokenizer.load(model());
    return tokenizer;
  }

  /** A recipe tokenizing with the tiny model's tokenizer. */
  static synchronized Recipe recipe() {
    if (recipe == null) recipe = Recipe.create(model(), null);
    return recipe;
  }

  static Options sampling(String json) {
    return Options.fromJson(json);
  }

  /** Every token id of completion 0 and the last chunk. */
  record Drained(int[] tokens, byte[] text, List<Chunk> chunks) {
    Chunk last() {
      return chunks.get(chunks.size() - 1);
    }
  }

  static Drained drain(Request r) {
    List<Chunk> chunks = new ArrayList<>();
    for (Chunk c : r) chunks.add(c);
    return collect(chunks);
  }

  static Drained collect(List<Chunk> chunks) {
    List<Integer> ids = new ArrayList<>();
    java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream();
    for (Chunk c : chunks) {
      if (c.index() != 0) continue;
      for (int id : c.tokenIds()) ids.add(id);
      text.writeBytes(c.textBytes());
    }
    return new Drained(ids.stream().mapToInt(Integer::intValue).toArray(), text.toByteArray(), chunks);
  }

  /** Runs a command, returns its stdout; fails on a non-zero exit. */
  static String run(List<String> command, String stdin) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    if (stdin != null) p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("timed out: " + command);
    }
    if (p.exitValue() != 0) throw new IllegalStateException("exit " + p.exitValue() + ": " + command);
    return new String(out, StandardCharsets.UTF_8);
  }

  /** This process's resident set size in KiB (VmRSS of /proc/self/status). */
  static long rssKib() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }

  static double number(Object o) {
    return ((Number) o).doubleValue();
  }
}
