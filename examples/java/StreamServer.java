// StreamServer: a small HTTP service on com.sun.net.httpserver that serves OpenAI Chat
// Completions, OpenAI Responses and Anthropic Messages on one model through the Java binding,
// streaming Server-Sent Events as the engine produces tokens. An example, not the product server.
//
//   java -cp deepinfer.jar:deepinfer-example.jar -Ddeepinfer.jni.library=.../libdeepinfer_jni.so \
//        StreamServer MODEL_DIR [PORT]
import ai.deepinfer.Chunk;
import ai.deepinfer.DeepInferException;
import ai.deepinfer.Engine;
import ai.deepinfer.Parser;
import ai.deepinfer.Prepared;
import ai.deepinfer.Protocol;
import ai.deepinfer.Recipe;
import ai.deepinfer.Request;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Executors;

public final class StreamServer {
  private static final Map<String, Protocol> ROUTES = Map.of(
      "/v1/chat/completions", Protocol.CHAT_COMPLETIONS,
      "/v1/responses", Protocol.RESPONSES,
      "/v1/messages", Protocol.MESSAGES);

  private final Engine engine;
  private final Recipe recipe;

  private StreamServer(Engine engine, Recipe recipe) {
    this.engine = engine;
    this.recipe = recipe;
  }

  public static void main(String[] args) throws IOException {
    if (args.length < 1) {
      System.err.println("usage: StreamServer MODEL_DIR [PORT]");
      System.exit(2);
    }
    Path model = Path.of(args[0]);
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 8000;
    Engine engine = Engine.open(model);
    Recipe recipe = Recipe.create(model, null);
    StreamServer app = new StreamServer(engine, recipe);
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    for (String path : ROUTES.keySet()) server.createContext(path, app::handle);
    server.setExecutor(Executors.newCachedThreadPool());
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.stop(0);
      recipe.close();
      engine.close();
    }));
    server.start();
    System.out.println("listening on http://127.0.0.1:" + server.getAddress().getPort());
    System.out.flush();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      if (!ex.getRequestMethod().equals("POST")) {
        send(ex, 405, "{\"error\": {\"message\": \"use POST\"}}");
        return;
      }
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Prepared prepared;
      try {
        prepared = recipe.prepare(ROUTES.get(ex.getHttpContext().getPath()), body);
      } catch (DeepInferException e) {
        // The recipe's detail carries the API's own error body and HTTP status.
        int status = e.detail().isEmpty() ? 500 : httpStatus(e.detail());
        send(ex, status, e.detail().isEmpty() ? "{\"error\": {\"message\": \"internal error\"}}" : errorBody(e.detail()));
        return;
      }
      try (prepared; Parser parser = Parser.forRequest(prepared); Request request = engine.submit(prepared)) {
        if (prepared.stream()) {
          stream(ex, parser, request);
        } else {
          for (Chunk c : request) {
            if (parser.push(c, null)) break;  // a stop sequence ended the output: closing cancels
          }
          if (!parser.isEnded()) parser.finish(null);
          send(ex, 200, parser.response());
        }
      }
    }
  }

  private static void stream(HttpExchange ex, Parser parser, Request request) throws IOException {
    ex.getResponseHeaders().set("Content-Type", "text/event-stream");
    ex.getResponseHeaders().set("Cache-Control", "no-cache");
    ex.sendResponseHeaders(200, 0);
    OutputStream out = ex.getResponseBody();
    IOException[] failed = new IOException[1];
    for (Chunk c : request) {
      boolean ended = parser.push(c, event -> {
        if (failed[0] != null) return;
        try {
          out.write(event.toSse().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
          failed[0] = e;
        }
      });
      if (failed[0] != null) throw failed[0];  // the client went away: closing the request cancels it
      out.flush();
      if (ended) break;
    }
    if (!parser.isEnded()) {
      parser.finish(event -> {
        try {
          out.write(event.toSse().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
          failed[0] = e;
        }
      });
    }
    out.flush();
  }

  private static void send(HttpExchange ex, int status, String json) throws IOException {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length);
    ex.getResponseBody().write(b);
  }

  // detail is {"body": {...}, "status": N}; read N and the body without a JSON library.
  private static int httpStatus(String detail) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"status\"\\s*:\\s*(\\d+)").matcher(detail);
    int last = 500;
    while (m.find()) last = Integer.parseInt(m.group(1));  // the outer one comes after the body
    return last;
  }

  private static String errorBody(String detail) {
    int start = detail.indexOf('{', detail.indexOf("\"body\""));
    int depth = 0;
    boolean inString = false;
    for (int i = start; i < detail.length(); i++) {
      char c = detail.charAt(i);
      if (inString) {
        if (c == '\\') i++;
        else if (c == '"') inString = false;
      } else if (c == '"') {
        inString = true;
      } else if (c == '{') {
        depth++;
      } else if (c == '}' && --depth == 0) {
        return detail.substring(start, i + 1);
      }
    }
    return detail;
  }
}
