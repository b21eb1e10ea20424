// Recipe and Parser through JNI: a prepared chat request's ids decode to its prompt, submitting
// it equals submitting its ids and sampling, the engine's chunks parse into events whose deltas
// equal the final response, and the parser joins a 4-byte character split between pushes and
// turns invalid bytes into U+FFFD; listener exceptions surface from push.
package ai.deepinfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RecipeParserTest {
  static final String CHAT = "{\"model\": \"deepseek-chat\", \"stream\": true, \"max_tokens\": 12, \"seed\": 11, "
      + "\"temperature\": 0.7, \"messages\": [{\"role\": \"user\", \"content\": \"Bonjour \uD83D\uDE00\"}]}";

  /** The concatenated content deltas of Chat Completions chunk events. */
  private static String chatContent(List<ParserEvent> events) {
    StringBuilder b = new StringBuilder();
    for (ParserEvent e : events) {
      if (e.data().equals("[DONE]")) continue;
      for (Object choice : (List<?>) MiniJson.object(e.data()).get("choices")) {
        Object delta = ((Map<?, ?>) choice).get("delta");
        Object content = delta == null ? null : ((Map<?, ?>) delta).get("content");
        if (content instanceof String s) b.append(s);
      }
    }
    return b.toString();
  }

  @Test
  void preparedIdsDecodeToThePromptAndSubmittingThemEqualsSubmitPrepared() {
    try (Prepared p = TestEnv.recipe().prepare(Protocol.CHAT_COMPLETIONS, CHAT)) {
      int[] ids = p.tokenIds();
      assertNotNull(ids);
      assertEquals(p.prompt(), TestEnv.tokenizer().decode(ids));
      assertTrue(p.stream());
      assertTrue(p.specialRanges().length >= 2 && p.specialRanges()[0] == 0);
      Map<String, Object> sampling = MiniJson.object(p.samplingJson());
      assertEquals(12.0, TestEnv.number(sampling.get("max_tokens")));
      assertEquals("none", MiniJson.object(p.constraintJson()).get("type"));
      assertEquals("chat", MiniJson.object(p.infoJson()).get("protocol"));
      assertTrue(MiniJson.parse(p.stopSequencesJson()) instanceof List);
      assertTrue(MiniJson.parse(p.imagesJson()) instanceof List);
      assertNull(p.imageData(0));  // a text-only request has no images
      try (Parser custom = Parser.forRequest(p, "{\"request_id\": \"chatcmpl-java-1\"}")) {
        List<ParserEvent> events = new ArrayList<>();
        custom.push("hi", FinishReason.STOP, events::add);
        assertTrue(events.get(0).data().contains("chatcmpl-java-1"), events.get(0).data());
      }
      DeepInferException bad = assertThrows(DeepInferException.class, () -> Parser.forRequest(p, "[1]"));
      assertEquals(Status.INVALID_ARG, bad.status());
      int[] viaPrepared;
      try (Request r = TestEnv.engine().submit(p)) {
        viaPrepared = TestEnv.drain(r).tokens();
      }
      int[] viaIds;
      try (Options s = Options.fromJson(p.samplingJson()); Request r = TestEnv.engine().submit(ids, s)) {
        viaIds = TestEnv.drain(r).tokens();
      }
      assertArrayEquals(viaIds, viaPrepared);
      assertTrue(viaPrepared.length > 0 && viaPrepared.length <= 12);
    }
    try (Recipe textOnly = Recipe.create(null, null);
        Prepared p = textOnly.prepare(Protocol.CHAT_COMPLETIONS, CHAT)) {
      assertNull(p.tokenIds());
      assertTrue(p.prompt().contains("Bonjour \uD83D\uDE00"));
    }
  }

  @Test
  void engineChunksParseIntoEventsThatMatchTheFinalResponse() throws Exception {
    try (Prepared prep = TestEnv.recipe().prepare(Protocol.CHAT_COMPLETIONS, CHAT.replace("\"deepseek-chat\"",
            "\"deepseek-chat\", \"thinking\": {\"type\": \"disabled\"}"));
        Parser parser = Parser.forRequest(prep)) {
      List<ParserEvent> events = new ArrayList<>();
      List<Chunk> chunks = new ArrayList<>();
      try (Request r = TestEnv.engine().submit(prep, chunks::add)) {
        assertTrue(r.await(30_000));
      }
      for (Chunk c : chunks) parser.push(c, events::add);
      assertTrue(parser.isEnded());
      assertEquals("[DONE]", events.get(events.size() - 1).data());
      for (ParserEvent e : events) assertEquals("", e.event());
      Map<String, Object> response = MiniJson.object(parser.response());
      Map<?, ?> message = (Map<?, ?>) ((Map<?, ?>) ((List<?>) response.get("choices")).get(0)).get("message");
      Object content = message.get("content");
      assertEquals(content == null ? "" : content, chatContent(events));
    }
  }

  @Test
  void otherProtocolsNameTheirEvents() {
    for (String protocol : new String[] {"responses", "messages"}) {
      try (Parser p = Parser.create("{\"protocol\": \"" + protocol + "\", \"stream\": true}")) {
        List<ParserEvent> events = new ArrayList<>();
        p.push("Hello", FinishReason.NONE, events::add);
        p.push(" world", FinishReason.STOP, events::add);
        assertTrue(p.isEnded());
        assertFalse(events.isEmpty());
        for (ParserEvent e : events) {
          assertFalse(e.event().isEmpty(), protocol);
          MiniJson.object(e.data());
          assertTrue(e.toSse().startsWith("event: " + e.event() + "\ndata: "));
        }
        assertTrue(p.response().contains("Hello world"), p.response());
      }
    }
  }

  @Test
  void aFourByteCharacterSplitBetweenPushesArrivesWhole() {
    byte[] emoji = "\uD83D\uDE00".getBytes(StandardCharsets.UTF_8);
    try (Parser p = Parser.create("{\"protocol\": \"chat\", \"stream\": true}")) {
      List<ParserEvent> events = new ArrayList<>();
      p.push(new byte[] {emoji[0], emoji[1]}, null, FinishReason.NONE, events::add);
      p.push(new byte[] {emoji[2], emoji[3], '!'}, null, FinishReason.NONE, events::add);
      p.finish(events::add);
      assertEquals("\uD83D\uDE00!", chatContent(events));
      assertTrue(p.isEnded());
    }
  }

  @Test
  void invalidBytesFromTheModelBecomeReplacementCharacters() {
    try (Parser p = Parser.create("{\"protocol\": \"chat\", \"stream\": true}")) {
      List<ParserEvent> events = new ArrayList<>();
      p.push(new byte[] {'a', (byte) 0xff, 'b', (byte) 0xc3}, null, FinishReason.NONE, events::add);
      p.push(new byte[] {'(', 'c'}, null, FinishReason.STOP, events::add);
      String content = chatContent(events);
      assertTrue(content.startsWith("a\uFFFDb\uFFFD"), content);
      assertTrue(content.endsWith("(c"), content);
    }
  }

  @Test
  void aListenerExceptionSurfacesFromPush() {
    try (Parser p = Parser.create("{\"protocol\": \"chat\", \"stream\": true}")) {
      IllegalArgumentException boom = new IllegalArgumentException("boom");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> p.push("text", FinishReason.STOP, ev -> {
            throw boom;
          }));
      assertSame(boom, e);
      assertTrue(p.isEnded());
      assertTrue(p.response().contains("text"));
    }
  }
}
