#!/usr/bin/env bash
# Java packaging suite: the distributable jar (CMake target deepinfer_java_dist) carries its
# linux-x86_64 natives; Maven installs it with bindings/java/pom.xml into a fresh local
# repository, offline (Debian's maven-install-plugin); then, with the build tree hidden, a
# program outside the tree compiled against that artifact generates the build tree CLI's
# greedy tokens with no -D flag, cleans its extracted natives up, and -Ddeepinfer.jni.library
# still overrides. Prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/suites/lib/packaging_suite.sh
source scripts/suites/lib/hide_build.sh

cmake --build "$build" --target deepinfer_java_dist deepinfer_cli >"$tmp/build.log" 2>&1 ||
  { tail -20 "$tmp/build.log"; bad "build deepinfer_java_dist"; finish; }
ensure_tiny_model
jar=$build/bindings/java/deepinfer-1.0.0.jar
listing=$(unzip -l "$jar" 2>/dev/null || jar tf "$jar")
missing=""
for f in natives.txt libdeepinfer_jni.so libdeepinfer.so.1; do
  echo "$listing" | grep -q "ai/deepinfer/native/linux-x86_64/$f" || missing="$missing $f"
done
[ -z "$missing" ] && ok "jar carries linux-x86_64 natives ($(( $(stat -c %s "$jar") / 1024 )) KiB)" || bad "jar lacks$missing"

m2=$tmp/m2
if mvn -B -q -s bindings/java/maven-settings.xml -Dmaven.repo.local="$m2" \
     org.apache.maven.plugins:maven-install-plugin:3.1.0:install-file \
     -Dfile="$jar" -DpomFile=bindings/java/pom.xml >"$tmp/mvn.log" 2>&1 &&
   [ -f "$m2/ai/deepinfer/deepinfer/1.0.0/deepinfer-1.0.0.jar" ]; then
  ok "mvn install-file: ai.deepinfer:deepinfer:1.0.0 in a fresh local repository"
else tail -20 "$tmp/mvn.log"; bad "mvn install-file"; finish; fi
artifact=$m2/ai/deepinfer/deepinfer/1.0.0/deepinfer-1.0.0.jar

cp -r examples/java/generate "$tmp/app"
javac --release 17 -Xlint:all -Werror -cp "$artifact" -d "$tmp/app/classes" "$tmp/app/Generate.java" 2>"$tmp/javac.log" &&
  ok "javac against the Maven artifact" || { cat "$tmp/javac.log"; bad "javac"; finish; }

want=$("$build/bin/deepinfer" generate --model "$model" --prompt-ids 0,100,200,300 --max-tokens 6 --temperature 0 \
       --ignore-eos --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ids"])')

hide_build "$build" || { bad "hide the build tree"; finish; }
mkdir -p "$tmp/jtmp"
run=(java -Djava.io.tmpdir="$tmp/jtmp" -cp "$artifact:$tmp/app/classes" Generate "$model" 6 0 100 200 300)
out=$(env -u LD_LIBRARY_PATH "${run[@]}" 2>&1)
got=$(echo "$out" | head -1)
if [ -n "$want" ] && [ "$got" = "$want" ] && echo "$out" | grep -q '^build: {.*"backends"'; then
  ok "no -D, build tree hidden: greedy ids = the CLI's $want"
else echo "$out" | tail -10; echo "cli: $want"; bad "generation from the jar"; fi
left=$(ls -A "$tmp/jtmp")
[ -z "$left" ] && ok "extracted natives removed at exit" || bad "left in java.io.tmpdir: $left"

msg=$(java -Ddeepinfer.jni.library=/nonexistent/libdeepinfer_jni.so -cp "$artifact:$tmp/app/classes" Generate "$model" 1 0 2>&1)
if echo "$msg" | grep -q "UnsatisfiedLinkError.*/nonexistent/libdeepinfer_jni.so"; then
  ok "-Ddeepinfer.jni.library overrides the bundled natives"
else echo "$msg" | tail -5; bad "-Ddeepinfer.jni.library override"; fi
finish
