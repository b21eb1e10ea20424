#!/usr/bin/env bash
# Java binding suite: the JUnit 5 tests (console launcher from Debian's junit5) under
# -Xcheck:jni with a fixed pre-touched heap (so the leak test's RSS bound measures native memory),
# then the example HTTP service on the bundled tiny model, checked with curl and python3.
# Uses the build of scripts/test.sh (DI_BUILD_DIR); prints "N passed, M failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${DI_BUILD_DIR:-$root/build}
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

jars=$build/bindings/java
jni=$build/lib/libdeepinfer_jni.so
cli=$build/bin/deepinfer
junit=/usr/share/java/junit-platform-console-standalone.jar
for f in "$jars/deepinfer.jar" "$jars/deepinfer-tests.jar" "$jars/examples/deepinfer-example.jar" "$jni" "$cli" "$junit"; do
  if [ ! -f "$f" ]; then
    bad "missing $f (configure with DI_BINDINGS=ON and build; scripts/bootstrap.sh installs junit5)"
    echo "$passed passed, $failed failed"; exit 1
  fi
done

# The bundled tiny DeepSeek-V4 (random weights, seed 0), made once as scripts/main.sh does.
model=$root/models/tiny-v4
if [ ! -f "$model/model.safetensors" ]; then
  "$cli" make-tiny-model --out "$model" --seed 0 >/dev/null || { bad "make-tiny-model"; echo "$passed passed, $failed failed"; exit 1; }
fi

# Two malloc arenas keep glibc's per-thread arenas from adding RSS noise to the leak test.
export MALLOC_ARENA_MAX=2
jvm=(java -Xcheck:jni -Xms192m -Xmx192m -XX:+AlwaysPreTouch -Dfile.encoding=UTF-8
     -Ddeepinfer.jni.library="$jni")

# --- JUnit ------------------------------------------------------------------------------------
log=$build/java-junit.log
# DI_JAVA_TESTS narrows the run (e.g. "--select-class ai.deepinfer.EngineTest") while developing.
timeout 1500 "${jvm[@]}" -Ddeepinfer.test.model="$model" -Ddeepinfer.test.cli="$cli" \
  -Ddeepinfer.test.exports="$root/abi/exports.txt" \
  -jar "$junit" --disable-banner --details=tree --disable-ansi-colors \
  --config=junit.jupiter.execution.timeout.default=300s \
  -cp "$jars/deepinfer.jar:$jars/deepinfer-tests.jar" \
  ${DI_JAVA_TESTS:---scan-classpath "$jars/deepinfer-tests.jar"} >"$log" 2>&1
rc=$?
grep -E "LeakTest:" "$log"
succ=$(grep -oE '\[ *[0-9]+ tests successful *\]' "$log" | grep -oE '[0-9]+' | head -1)
fail=$(grep -oE '\[ *[0-9]+ tests failed *\]' "$log" | grep -oE '[0-9]+' | head -1)
if [ -z "$succ" ] || [ -z "$fail" ] || [ "$((succ + fail))" = 0 ]; then
  tail -40 "$log"; bad "junit did not report (exit $rc)"
else
  passed=$((passed + succ)); failed=$((failed + fail))
  echo "junit: $succ passed, $fail failed"
  [ "$fail" != 0 ] && grep -E "✘|MethodSource|=> " "$log" | head -60
fi
# CheckJNI reports misuse as warnings and keeps going: any of them fails the suite.
if grep -qE "WARNING in native method|FATAL ERROR in native method" "$log"; then
  grep -E -A3 "WARNING in native method|FATAL ERROR in native method" "$log" | head -20
  bad "-Xcheck:jni reported JNI misuse"
else
  ok "-Xcheck:jni reported no JNI misuse"
fi

# --- the example service ----------------------------------------------------------------------
srv_log=$build/java-example.log
"${jvm[@]}" -cp "$jars/deepinfer.jar:$jars/examples/deepinfer-example.jar" StreamServer "$model" 0 >"$srv_log" 2>&1 &
srv=$!
url=""
for _ in $(seq 1 300); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$srv_log" | head -1)
  [ -n "$url" ] && break
  kill -0 "$srv" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  cat "$srv_log"; bad "example: StreamServer did not start"
else
  req='{"model": "deepseek-chat", "max_tokens": 16, "seed": 3, "temperature": 0.8, "thinking": {"type": "disabled"}, "messages": [{"role": "user", "content": "Say hi \ud83d\ude00"}]'
  curl -sS -N -X POST "$url/v1/chat/completions" -H 'Content-Type: application/json' \
    -d "$req, \"stream\": true}" >"$build/java-example.sse" 2>&1
  curl -sS -X POST "$url/v1/chat/completions" -H 'Content-Type: application/json' \
    -d "$req}" >"$build/java-example.json" 2>&1
  # The stream: only data lines and blank lines, each data line JSON until the closing [DONE];
  # its content deltas and finish reason equal the non-streaming response for the same seed.
  if python3 - "$build/java-example.sse" "$build/java-example.json" <<'PY'
import json, sys
sse = open(sys.argv[1], encoding="utf-8").read()
full = json.load(open(sys.argv[2], encoding="utf-8"))
assert sse.endswith("data: [DONE]\n\n"), sse[-200:]
datas = [l[6:] for l in sse.split("\n") if l.startswith("data: ")]
assert all(l == "" or l.startswith("data: ") for l in sse.split("\n")), "unexpected line"
text, finish = "", None
for d in datas[:-1]:
    ev = json.loads(d)
    assert ev["object"] == "chat.completion.chunk", ev
    for ch in ev["choices"]:
        text += ch["delta"].get("content") or ""
        finish = ch.get("finish_reason") or finish
msg = full["choices"][0]["message"]
assert len(datas) >= 3, datas
assert text == (msg.get("content") or ""), (text, msg)
assert finish == full["choices"][0]["finish_reason"], (finish, full)
PY
  then ok "example: streamed chat equals the non-streaming response"
  else head -c 2000 "$build/java-example.sse"; bad "example: stream check"
  fi
  code=$(curl -sS -o "$build/java-example.err" -w '%{http_code}' -X POST "$url/v1/messages" \
    -H 'Content-Type: application/json' -d '{"model": "deepseek-chat", "messages": []}')
  if [ "$code" = 400 ] && python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); assert b["type"]=="error", b' "$build/java-example.err"; then
    ok "example: a bad Messages request gets Anthropic's 400 error body"
  else
    cat "$build/java-example.err"; bad "example: bad request gave HTTP $code"
  fi
  if grep -qE "WARNING in native method|FATAL ERROR|Exception in" "$srv_log"; then
    cat "$srv_log"; bad "example: the server logged JNI warnings or exceptions"
  else
    ok "example: server log clean under -Xcheck:jni"
  fi
fi
kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
