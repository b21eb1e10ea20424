// 1,000 engine create / generate / destroy cycles on the bundled tiny model leave the process's
// memory flat: the C heap (exact, from malloc's own count), the Go heap after a collection, and
// the resident set (coarse: it also moves with allocator caching and JIT-free runtime noise).
package deepinfer

import (
	"deepinfer.dev/go/internal/cheap"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	leakCycles = 1000
	// Growth allowed over the measured cycles. The C and Go heaps are counted exactly, so their
	// bounds only leave room for per-thread caches of OS threads Go starts during the run (a few
	// KiB each); any handle, response or event buffer leaked per cycle exceeds them. RSS also
	// moves with pages malloc keeps for reuse (9 MiB seen on a CI machine with no leak); one leaked
	// engine, whose mapped and touched weights alone are tens of MiB, still exceeds its bound.
	leakBoundCHeap  = 256 << 10
	leakBoundGoHeap = 1 << 20
	leakBoundRSS    = 24 << 20
)

func goHeapBytes() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func TestCreateGenerateDestroyCyclesDoNotGrowRSS(t *testing.T) {
	if raceEnabled {
		t.Skip("measured without -race (scripts/suites/go.sh runs it in a second pass)")
	}
	// The shared tokenizer stays open, so every engine shares its loaded tokenizer.json (as a
	// service's recipe and engine do) instead of parsing 129k tokens per cycle.
	model := tinyModel(t)
	_, tok, recipe := tinyShared(t)
	prompt, err := tok.Encode("Leak check", false, true)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"model":"deepseek-v4","messages":[{"role":"user","content":"hi"}]}`)
	var first []int32
	cycle := func() {
		// Small limits keep each engine's KV cache small: the cycle is about handles.
		engOpts := mustOptions(t, map[string]any{"max_num_seqs": 2, "max_model_len": 64})
		e, err := NewEngine(model, engOpts)
		engOpts.Close()
		if err != nil {
			t.Fatal(err)
		}
		opts := greedyOptions(t, 2)
		r, err := e.Submit(prompt, opts)
		if err != nil {
			t.Fatal(err)
		}
		chunks := drain(t, r)
		got := ids(chunks)
		if first == nil {
			first = got
		}
		text := ""
		for _, c := range chunks {
			text += c.Text
		}
		if want, _ := tok.Decode(got, false); len(got) != 2 || !reflect.DeepEqual(got, first) || text != want {
			t.Fatalf("got %v %q, first %v, decode %q", got, text, first, want)
		}
		r.Close()
		long := greedyOptions(t, 40)
		r2, _ := e.Submit(prompt, long)
		r2.Next(bgctx) // left unfinished: Close cancels and frees it
		r2.Close()
		long.Close()
		opts.Close()
		e.Close()
		p, err := recipe.Prepare(ProtocolChatCompletions, body)
		if err != nil {
			t.Fatal(err)
		}
		parser, _ := NewParser(p.ParserOptionsJSON())
		parser.Push(Output{Text: "x", FinishReason: FinishStop, PromptTokens: -1, CachedPromptTokens: -1, CompletionTokens: -1}, nil)
		parser.Response()
		parser.Close()
		p.Close()
	}
	// Warm-up: glibc's arenas for the engine threads, the Go heap and the OS threads Go starts
	// reach their steady size in the first ~200 cycles.
	for i := 0; i < 200; i++ {
		cycle()
	}
	debug.FreeOSMemory() // GC and hand freed pages back, so RSS shows only live memory
	before, cBefore, goBefore := rssBytes(t), cheap.InUse(), goHeapBytes()
	start := time.Now()
	for i := 0; i < leakCycles; i++ {
		cycle()
	}
	elapsed := time.Since(start)
	debug.FreeOSMemory()
	grown, cGrown, goGrown := rssBytes(t)-before, cheap.InUse()-cBefore, goHeapBytes()-goBefore
	t.Logf("%d engine cycles in %v (%v each); growth over %d cycles: C heap %d B, Go heap %d B, RSS %d KiB",
		leakCycles, elapsed.Round(time.Millisecond), (elapsed / leakCycles).Round(time.Microsecond), leakCycles,
		cGrown, goGrown, grown/1024)
	if cGrown > leakBoundCHeap {
		t.Errorf("the C heap grew %d bytes over %d cycles (bound %d)", cGrown, leakCycles, leakBoundCHeap)
	}
	if goGrown > leakBoundGoHeap {
		t.Errorf("the Go heap grew %d bytes over %d cycles (bound %d)", goGrown, leakCycles, leakBoundGoHeap)
	}
	if grown > leakBoundRSS {
		t.Errorf("RSS grew %d bytes over %d cycles (bound %d)", grown, leakCycles, leakBoundRSS)
	}
}
