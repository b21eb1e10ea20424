// C errors arrive as DeepInferException with the library's status, message (naming the field)
// and detail; misuse of closed objects is an IllegalStateException, never a crash.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ErrorsTest {
  @Test
  void unknownOptionKeyIsUnsupportedAndTheMessageNamesTheKey() {
    try (Options o = new Options()) {
      // A 4-byte character in the key travels into C and back in the message unchanged.
      String key = "no_such_key_\uD83D\uDE00";
      DeepInferException e = assertThrows(DeepInferException.class, () -> o.set(key, 1L));
      assertEquals(Status.UNSUPPORTED, e.status());
      assertEquals(Status.UNSUPPORTED.code(), e.code());
      assertTrue(e.errorMessage().contains(key), e.getMessage());
      assertTrue(e.getMessage().startsWith("DI_E_UNSUPPORTED: "), e.getMessage());
    }
  }

  @Test
  void valueOfTheWrongTypeIsInvalidArg() {
    try (Options o = new Options()) {
      DeepInferException e = assertThrows(DeepInferException.class, () -> o.set("temperature", "hot"));
      assertEquals(Status.INVALID_ARG, e.status());
      assertTrue(e.errorMessage().contains("temperature"), e.getMessage());
      assertThrows(DeepInferException.class, () -> o.set("temperature", Double.NaN));
    }
  }

  @Test
  void optionsRoundTripEveryType() {
    try (Options o = new Options()) {
      o.set("temperature", 0.25).set("max_tokens", 7L).update("{\"seed\": 42, \"top_p\": 0.5}");
      assertEquals(0.25, o.getDouble("temperature"));
      assertEquals(7L, o.getLong("max_tokens"));
      assertEquals(42L, o.getLong("seed"));
      DeepInferException unset = assertThrows(DeepInferException.class, () -> o.getLong("top_k"));
      assertEquals(Status.NOT_FOUND, unset.status());
      Map<String, Object> json = MiniJson.object(o.toJson());
      assertEquals(7.0, TestEnv.number(json.get("max_tokens")));
      try (Options copy = o.copy()) {
        copy.set("max_tokens", 9L);
        assertEquals(7L, o.getLong("max_tokens"));
        assertEquals(9L, copy.getLong("max_tokens"));
      }
      // All-or-nothing: a bad key in an update changes nothing.
      assertThrows(DeepInferException.class, () -> o.update("{\"max_tokens\": 1, \"nope\": 2}"));
      assertEquals(7L, o.getLong("max_tokens"));
      DeepInferException parse = assertThrows(DeepInferException.class, () -> o.update("{not json"));
      assertEquals(Status.PARSE, parse.status());
    }
  }

  @Test
  void stringAndJsonKeysFromTheSchemaRoundTrip() {
    // Find a string key and a JSON key in the library's own schema rather than naming them here.
    String stringKey = null;
    String jsonKey = null;
    for (Object entry : (java.util.List<?>) MiniJson.parse(DeepInfer.optionsSchema())) {
      Map<?, ?> m = (Map<?, ?>) entry;
      if (stringKey == null && "string".equals(m.get("type"))) stringKey = (String) m.get("key");
      if (jsonKey == null && "json".equals(m.get("type"))) jsonKey = (String) m.get("key");
    }
    try (Options o = new Options()) {
      if (stringKey != null) {
        o.set(stringKey, "v\u00e9\uD83D\uDE00");
        assertEquals("v\u00e9\uD83D\uDE00", o.getString(stringKey));
      }
      if (jsonKey != null) {
        o.setJson(jsonKey, "[1, 2]");
        assertEquals("[1,2]", o.getJson(jsonKey));
      }
    }
    assertTrue(stringKey != null || jsonKey != null, "the schema has neither string nor JSON keys");
  }

  @Test
  void missingModelDirectoryNamesThePath() {
    Path missing = Path.of("/nonexistent/deepinfer-model");
    DeepInferException e = assertThrows(DeepInferException.class, () -> Engine.open(missing));
    assertTrue(e.status() == Status.NOT_FOUND || e.status() == Status.IO, e.getMessage());
    assertTrue(e.errorMessage().contains("/nonexistent/deepinfer-model"), e.getMessage());
    DeepInferException t = assertThrows(DeepInferException.class, () -> Tokenizer.load(missing));
    assertTrue(t.status() == Status.NOT_FOUND || t.status() == Status.IO, t.getMessage());
  }

  @Test
  void badPromptsAreInvalidArgAndNameTheProblem() {
    Engine engine = TestEnv.engine();
    DeepInferException empty = assertThrows(DeepInferException.class, () -> engine.submit(new int[0], null));
    assertEquals(Status.INVALID_ARG, empty.status());
    DeepInferException outside = assertThrows(DeepInferException.class,
        () -> engine.submit(new int[] {1, Integer.MAX_VALUE}, null));
    assertEquals(Status.INVALID_ARG, outside.status());
    try (Options bad = Options.fromJson("{\"temperature\": -1}")) {
      DeepInferException t = assertThrows(DeepInferException.class, () -> engine.submit(new int[] {1, 2}, bad));
      assertEquals(Status.INVALID_ARG, t.status());
      assertTrue(t.errorMessage().contains("temperature"), t.getMessage());
    }
    // A listener request that fails to submit is released at once (no chunk will come).
    assertThrows(DeepInferException.class, () -> engine.submit(new int[0], null, c -> {}));
  }

  @Test
  void rejectedApiRequestCarriesTheHttpStatusAndErrorBody() {
    try (Recipe recipe = Recipe.create(null, null)) {
      DeepInferException e = assertThrows(DeepInferException.class,
          () -> recipe.prepare(Protocol.CHAT_COMPLETIONS, "{\"model\": \"deepseek-chat\", \"messages\": 5}"));
      assertEquals(Status.INVALID_ARG, e.status());
      Map<String, Object> detail = MiniJson.object(e.detail());
      assertEquals(400.0, TestEnv.number(detail.get("status")));
      assertTrue(((Map<?, ?>) detail.get("body")).containsKey("error"), e.detail());
      assertThrows(DeepInferException.class, () -> recipe.prepare(Protocol.MESSAGES, "not json"));
    }
  }

  @Test
  void parserResponseBeforeTheEndIsAStateError() {
    try (Parser p = Parser.create("{\"protocol\": \"chat\"}")) {
      DeepInferException e = assertThrows(DeepInferException.class, p::response);
      assertEquals(Status.STATE, e.status());
    }
    DeepInferException bad = assertThrows(DeepInferException.class, () -> Parser.create("{\"protocol\": 3}"));
    assertEquals(Status.INVALID_ARG, bad.status());
    assertTrue(bad.errorMessage().contains("protocol"), bad.getMessage());
  }

  @Test
  void closedObjectsRefuseCallsAndCloseTwiceIsHarmless() {
    Options o = new Options();
    o.close();
    o.close();
    assertThrows(IllegalStateException.class, () -> o.set("temperature", 1.0));
    Recipe r = Recipe.create(null, null);
    r.close();
    assertThrows(IllegalStateException.class, () -> r.prepare(Protocol.CHAT_COMPLETIONS, "{}"));
    Parser p = Parser.create("{}");
    p.close();
    assertThrows(IllegalStateException.class, () -> p.push("x", FinishReason.NONE, null));
  }
}
