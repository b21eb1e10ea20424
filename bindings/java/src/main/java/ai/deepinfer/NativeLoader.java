// NativeLoader: finds libdeepinfer_jni.so for DeepInfer's static initialiser. Order: the system
// property deepinfer.jni.library (an absolute path, the override), then the natives this jar
// carries for the running platform (extracted to a fresh temporary folder, as sqlite-jdbc
// does, because a shared object cannot be loaded from inside a jar), then java.library.path.
package ai.deepinfer;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

final class NativeLoader {
  private NativeLoader() {}

  /** Where a jar keeps its natives: /ai/deepinfer/native/OS-ARCH/, listed in its natives.txt. */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
    if (arch.equals("arm64")) arch = "aarch64";
    return (os.startsWith("linux") ? "linux" : os.replace(' ', '_')) + "-" + arch;
  }

  static void load() {
    String path = System.getProperty("deepinfer.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
      return;
    }
    String dir = "/ai/deepinfer/native/" + platform() + "/";
    List<String> files = bundled(dir);
    if (files.isEmpty()) {
      try {
        System.loadLibrary("deepinfer_jni");
      } catch (UnsatisfiedLinkError e) {
        UnsatisfiedLinkError err = new UnsatisfiedLinkError("deepinfer: this jar carries no natives for "
            + platform() + " and libdeepinfer_jni.so is not on java.library.path; use a jar built for this "
            + "platform or -Ddeepinfer.jni.library=/path/to/libdeepinfer_jni.so (" + e.getMessage() + ")");
        err.initCause(e);
        throw err;
      }
      return;
    }
    Path out = extract(dir, files);
    // libdeepinfer.so.1 first: libdeepinfer_jni.so needs it by SONAME, and the dynamic linker
    // reuses an object already loaded under that name. The CUDA backend is not loaded here:
    // libdeepinfer finds it beside itself when a GPU is present.
    for (String f : files) {
      if (f.startsWith("libdeepinfer.so")) System.load(out.resolve(f).toString());
    }
    System.load(out.resolve("libdeepinfer_jni.so").toString());
  }

  private static List<String> bundled(String dir) {
    List<String> files = new ArrayList<>();
    try (InputStream in = NativeLoader.class.getResourceAsStream(dir + "natives.txt")) {
      if (in == null) return files;
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        if (!line.isBlank()) files.add(line.strip());
      }
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("deepinfer: cannot read " + dir + "natives.txt from the jar: " + e);
    }
    return files;
  }

  // A new folder per process: two JVMs, or two versions of the jar, never share files.
  private static Path extract(String dir, List<String> files) {
    try {
      Path out = Files.createTempDirectory("deepinfer-natives-");
      out.toFile().deleteOnExit();
      for (String f : files) {
        try (InputStream in = NativeLoader.class.getResourceAsStream(dir + f)) {
          if (in == null) throw new IOException(dir + f + " is listed in natives.txt but not in the jar");
          Path target = out.resolve(f);
          Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
          // deleteOnExit runs in reverse order of registration: files before their folder.
          target.toFile().deleteOnExit();
        }
      }
      return out;
    } catch (IOException e) {
      UnsatisfiedLinkError err = new UnsatisfiedLinkError("deepinfer: cannot extract the jar's natives to "
          + System.getProperty("java.io.tmpdir") + ": " + e.getMessage());
      err.initCause(e);
      throw err;
    }
  }
}
