// Every function libdeepinfer exports is called by the JNI layer (its undefined dynamic symbols,
// read with nm), every Java native method has its JNI symbol and back, the ABI version matches
// the header, and the Status enum names every code the library names.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

class AbiCoverageTest {
  private static TreeSet<String> symbols(String... nmFlags) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("nm", "-D"));
    cmd.addAll(List.of(nmFlags));
    cmd.add(TestEnv.jniLibrary().toString());
    TreeSet<String> names = new TreeSet<>();
    for (String line : TestEnv.run(cmd, null).split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 0 || f[f.length - 1].isEmpty()) continue;
      String name = f[f.length - 1];
      int at = name.indexOf('@');
      names.add(at >= 0 ? name.substring(0, at) : name);
    }
    return names;
  }

  @Test
  void everyExportedDiFunctionIsCalledByTheJniLayer() throws Exception {
    TreeSet<String> exported = new TreeSet<>();
    for (String line : Files.readAllLines(TestEnv.exports())) {
      if (!line.isBlank() && !line.startsWith("#")) exported.add(line.trim());
    }
    assertTrue(exported.size() > 50, "abi/exports.txt looks truncated: " + exported.size());
    TreeSet<String> called = new TreeSet<>();
    for (String s : symbols("--undefined-only")) {
      if (s.startsWith("di_")) called.add(s);
    }
    TreeSet<String> missing = new TreeSet<>(exported);
    missing.removeAll(called);
    assertEquals(new TreeSet<String>(), missing, "exported by libdeepinfer but not wrapped by the Java binding");
    TreeSet<String> unknown = new TreeSet<>(called);
    unknown.removeAll(exported);
    assertEquals(new TreeSet<String>(), unknown, "called by the JNI layer but not in abi/exports.txt");
  }

  // JNI's short name mangling (JNI spec, "Resolving Native Method Names").
  private static String mangle(String s) {
    StringBuilder b = new StringBuilder();
    for (char c : s.toCharArray()) {
      if (c == '.' || c == '/') b.append('_');
      else if (c == '_') b.append("_1");
      else if (c == ';') b.append("_2");
      else if (c == '[') b.append("_3");
      else if (c < 128 && Character.isLetterOrDigit(c)) b.append(c);
      else b.append(String.format("_0%04x", (int) c));
    }
    return b.toString();
  }

  @Test
  void everyNativeMethodHasItsJniSymbolAndEveryJniSymbolAMethod() throws Exception {
    Path jar = Path.of(DeepInfer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    TreeSet<String> expected = new TreeSet<>();
    try (JarFile jf = new JarFile(jar.toFile())) {
      for (var e : java.util.Collections.list(jf.entries())) {
        String n = e.getName();
        if (!n.startsWith("ai/deepinfer/") || !n.endsWith(".class")) continue;
        Class<?> c = Class.forName(n.substring(0, n.length() - 6).replace('/', '.'), false,
            DeepInfer.class.getClassLoader());
        for (Method m : c.getDeclaredMethods()) {
          if (Modifier.isNative(m.getModifiers())) expected.add("Java_" + mangle(c.getName()) + "_" + mangle(m.getName()));
        }
      }
    }
    assertFalse(expected.isEmpty());
    TreeSet<String> defined = new TreeSet<>();
    for (String s : symbols("--defined-only")) {
      if (s.startsWith("Java_")) defined.add(s);
    }
    assertEquals(expected, defined);
  }

  @Test
  void libraryAbiMatchesTheHeaderTheBindingWasBuiltWith() {
    assertEquals(DeepInfer.headerAbiVersion(), DeepInfer.abiVersion());
    assertTrue(DeepInfer.version().startsWith(DeepInfer.abiVersion() / 10000 + "."), DeepInfer.version());
    assertTrue(MiniJson.object(DeepInfer.buildInfo()).containsKey("version"));
    Object schema = MiniJson.parse(DeepInfer.optionsSchema());
    assertTrue(schema instanceof List<?> l && !l.isEmpty());
  }

  @Test
  void statusEnumNamesEveryCodeTheLibraryNames() {
    for (Status s : Status.values()) {
      if (s == Status.UNKNOWN) continue;
      assertEquals(DeepInfer.statusName(s.code()), s.cName(), s.name());
    }
    // A code the library knows but this enum does not would read as UNKNOWN: scan a wide range.
    for (int code = -64; code <= 64; code++) {
      String c = DeepInfer.statusName(code);
      if (!c.equals("DI_UNKNOWN_STATUS")) assertEquals(c, Status.of(code).cName(), "code " + code);
      else assertEquals(Status.UNKNOWN, Status.of(code), "code " + code);
    }
  }
}
