// Generate: the smallest program over the Maven artifact ai.deepinfer:deepinfer. Greedy tokens
// for prompt ids given on the command line, printed as [a, b, ...], then the loaded backends.
// The jar loads its own natives: no -Djava.library.path, no -Ddeepinfer.jni.library.
// usage: java -cp deepinfer-1.0.0.jar:. Generate MODEL_DIR MAX_TOKENS ID...
import ai.deepinfer.Chunk;
import ai.deepinfer.DeepInfer;
import ai.deepinfer.Engine;
import ai.deepinfer.Options;
import ai.deepinfer.Request;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public final class Generate {
  public static void main(String[] args) {
    if (args.length < 3) {
      System.err.println("usage: Generate MODEL_DIR MAX_TOKENS ID...");
      System.exit(2);
    }
    int[] prompt = new int[args.length - 2];
    for (int i = 2; i < args.length; i++) prompt[i - 2] = Integer.parseInt(args[i]);
    List<Integer> out = new ArrayList<>();
    try (Engine engine = Engine.open(Path.of(args[0]));
         Options sampling = new Options().set("temperature", 0.0).set("ignore_eos", 1L)
             .set("max_tokens", Long.parseLong(args[1]));
         Request request = engine.submit(prompt, sampling)) {
      for (Chunk chunk : request) {
        for (int id : chunk.tokenIds()) out.add(id);
      }
    }
    System.out.println(out);
    System.out.println("build: " + DeepInfer.buildInfo());
  }
}
