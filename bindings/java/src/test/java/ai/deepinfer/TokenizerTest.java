// The Tokenizer through JNI: ids equal the CLI's (the same C++ tokenizer, verified against
// Hugging Face elsewhere), text with 4-byte characters round-trips, token pieces are raw bytes
// whose concatenation is the text, partial characters decode to U+FFFD, threads agree.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class TokenizerTest {
  static final String[] TEXTS = {
      "The capital of France is",
      "emoji \uD83D\uDE00 and music \uD834\uDD1E and \uD83E\uDDD1\u200D\uD83D\uDE80",
      "\u4E2D\u6587\u6587\u672C\uFF0C\u6DF7\u5408 text \u00E9\u00E8 e\u0301",
      "<\uFF5CUser\uFF5C>hello<\uFF5CAssistant\uFF5C>",
      "  leading spaces\ttabs\nnewlines\r\n",
      "",
  };

  private static String jsonString(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  private static int[] ids(Object list) {
    return ((List<?>) list).stream().mapToInt(o -> (int) TestEnv.number(o)).toArray();
  }

  @Test
  void idsEqualTheCliWithAndWithoutSpecialTokens() throws Exception {
    StringBuilder input = new StringBuilder();
    for (String t : TEXTS) input.append("{\"text\": ").append(jsonString(t)).append("}\n");
    String tok = TestEnv.model().toString();
    String[] withSpecials = TestEnv.run(List.of(TestEnv.cli().toString(), "tokenize", "--tokenizer", tok),
        input.toString()).split("\n");
    String[] plain = TestEnv.run(List.of(TestEnv.cli().toString(), "tokenize", "--tokenizer", tok, "--no-specials"),
        input.toString()).split("\n");
    Tokenizer t = TestEnv.tokenizer();
    for (int i = 0; i < TEXTS.length; i++) {
      assertArrayEquals(ids(MiniJson.object(withSpecials[i]).get("ids")), t.encode(TEXTS[i], true, false), TEXTS[i]);
      assertArrayEquals(ids(MiniJson.object(plain[i]).get("ids")), t.encode(TEXTS[i]), TEXTS[i]);
    }
    // Content never yields control tokens; template text does.
    int user = t.tokenId("<\uFF5CUser\uFF5C>");
    assertTrue(java.util.Arrays.stream(t.encode(TEXTS[3], true, false)).anyMatch(id -> id == user));
    assertTrue(java.util.Arrays.stream(t.encode(TEXTS[3])).noneMatch(id -> id == user));
  }

  @Test
  void textWithFourByteCharactersRoundTrips() {
    Tokenizer t = TestEnv.tokenizer();
    for (String s : TEXTS) assertEquals(s, t.decode(t.encode(s)), s);
  }

  @Test
  void piecesAreRawBytesWhoseConcatenationIsTheText() {
    Tokenizer t = TestEnv.tokenizer();
    String s = TEXTS[1];
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    boolean sawPartial = false;
    for (int id : t.encode(s)) {
      byte[] piece = t.tokenToPiece(id);
      all.writeBytes(piece);
      var decoder = StandardCharsets.UTF_8.newDecoder();
      try {
        decoder.decode(java.nio.ByteBuffer.wrap(piece));
      } catch (java.nio.charset.CharacterCodingException e) {
        sawPartial = true;
        // A piece that is not valid UTF-8 alone decodes with U+FFFD, never an exception or crash.
        assertTrue(t.decode(new int[] {id}).contains("\uFFFD"), "token " + id);
      }
    }
    assertArrayEquals(s.getBytes(StandardCharsets.UTF_8), all.toByteArray());
    assertTrue(sawPartial, "expected some emoji to be split across byte-level tokens");
  }

  @Test
  void segmentsEncodeEachOnItsOwnWithSpecialRanges() {
    Tokenizer t = TestEnv.tokenizer();
    String template = "<\uFF5CUser\uFF5C>";
    String content = "hi <\uFF5CAssistant\uFF5C> \uD83D\uDE00";
    Tokenizer.Encoding e = t.encodeSegments(List.of(new Tokenizer.Segment(template, true),
        new Tokenizer.Segment(content, false), new Tokenizer.Segment(template, true)));
    int[] a = t.encode(template, true, false);
    int[] b = t.encode(content);
    List<Integer> expected = new ArrayList<>();
    for (int id : a) expected.add(id);
    for (int id : b) expected.add(id);
    for (int id : a) expected.add(id);
    assertArrayEquals(expected.stream().mapToInt(Integer::intValue).toArray(), e.ids());
    assertArrayEquals(new int[] {0, a.length, a.length + b.length, 2 * a.length + b.length}, e.specialRanges());
  }

  @Test
  void lookupsAndErrors() {
    Tokenizer t = TestEnv.tokenizer();
    assertTrue(t.vocabSize() > 1000);
    int user = t.tokenId("<\uFF5CUser\uFF5C>");
    assertEquals("<\uFF5CUser\uFF5C>", new String(t.tokenToPiece(user), StandardCharsets.UTF_8));
    DeepInferException missing = assertThrows(DeepInferException.class, () -> t.tokenId("no such token \u00e9\u00e9"));
    assertEquals(Status.NOT_FOUND, missing.status());
    DeepInferException outside = assertThrows(DeepInferException.class, () -> t.decode(new int[] {1, -5}));
    assertEquals(Status.INVALID_ARG, outside.status());
    assertThrows(DeepInferException.class, () -> t.tokenToPiece((int) t.vocabSize()));
    Tokenizer.SpecialIds s = t.specialIds();
    assertTrue(s.bos() >= 0 && s.eos() >= 0, s.toString());
    // BOS is a special token: decoding skips it only when asked.
    assertEquals("", t.decode(new int[] {s.bos()}, true));
    assertEquals(new String(t.tokenToPiece(s.bos()), StandardCharsets.UTF_8), t.decode(new int[] {s.bos()}));
    int[] withSpecial = t.encode("x", false, true);
    assertEquals(s.addBos() && s.bos() >= 0, withSpecial.length > 0 && withSpecial[0] == s.bos());
  }

  @Test
  void concurrentEncodesAgreeWithOneThread() throws Exception {
    Tokenizer t = TestEnv.tokenizer();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int k = 0; k < 64; k++) {
        String s = TEXTS[k % TEXTS.length] + " #" + k;
        int[] expected = t.encode(s);
        results.add(pool.submit(() -> java.util.Arrays.equals(expected, t.encode(s)) && s.equals(t.decode(expected))));
      }
      for (Future<Boolean> f : results) assertTrue(f.get());
    } finally {
      pool.shutdownNow();
    }
  }
}
