// 1,000 create / generate / destroy cycles leave the process's resident memory flat.
package deepinfer

import (
	"os"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

const (
	leakCycles = 1000
	leakBound  = 8 << 20 // allowed RSS growth after warm-up: allocator noise, not a leak
)

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
	fx := v4Fixtures(t)[0]
	recipe, err := NewRecipe("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer recipe.Close()
	body := []byte(`{"model":"deepseek-v4","messages":[{"role":"user","content":"hi"}]}`)
	cycle := func() {
		engOpts := mustOptions(t, map[string]any{"kv_cache_bytes": 1 << 20})
		e, err := NewEngine(fx.Dir, engOpts)
		engOpts.Close()
		if err != nil {
			t.Fatal(err)
		}
		opts := greedyOptions(t, 4)
		r, err := e.Submit(fx.Prompt, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(drain(t, r)); !reflect.DeepEqual(got, fx.Greedy[:4]) {
			t.Fatalf("got %v", got)
		}
		r.Close()
		r2, _ := e.Submit(fx.Prompt, opts)
		r2.Next(bgctx) // left unfinished: Close cancels and frees it
		r2.Close()
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
	for i := 0; i < 50; i++ {
		cycle()
	}
	debug.FreeOSMemory() // GC and hand freed pages back, so RSS shows only live memory
	before := rssBytes(t)
	for i := 0; i < leakCycles; i++ {
		cycle()
	}
	debug.FreeOSMemory() // GC and hand freed pages back, so RSS shows only live memory
	grown := rssBytes(t) - before
	t.Logf("RSS growth over %d cycles: %d KiB", leakCycles, grown/1024)
	if grown > leakBound {
		t.Errorf("RSS grew %d bytes over %d cycles", grown, leakCycles)
	}
}
