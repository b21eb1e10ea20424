// Shared test helpers: the repository, the DeepSeek-V4 transformers fixtures and the bundled tiny
// model (DI_TINY_MODEL, default models/tiny-v4, made with the CLI from DI_BUILD_DIR on first use).
package deepinfer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
)

var repoRoot = func() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}()

type v4Fixture struct {
	Dir    string
	Prompt []int32 `json:"prompt_ids"`
	Greedy []int32 `json:"greedy_ids"`
}

func v4Fixtures(t testing.TB) []v4Fixture {
	dirs, _ := filepath.Glob(filepath.Join(repoRoot, "tests", "fixtures", "model_v4", "*", "fixture.json"))
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatal("no DeepSeek-V4 fixtures under tests/fixtures/model_v4")
	}
	var out []v4Fixture
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx v4Fixture
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatal(err)
		}
		fx.Dir = filepath.Dir(f)
		out = append(out, fx)
	}
	return out
}

var tinyOnce sync.Once
var tinyErr error

func tinyModel(t testing.TB) string {
	dir := os.Getenv("DI_TINY_MODEL")
	if dir == "" {
		dir = filepath.Join(repoRoot, "models", "tiny-v4")
	}
	tinyOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err == nil {
			return
		}
		build := os.Getenv("DI_BUILD_DIR")
		if build == "" {
			build = filepath.Join(repoRoot, "build")
		}
		tinyErr = exec.Command(filepath.Join(build, "bin", "deepinfer"), "make-tiny-model",
			"--out", dir, "--seed", "0").Run()
	})
	if tinyErr != nil {
		t.Fatalf("make-tiny-model: %v", tinyErr)
	}
	return dir
}

// Loading the tiny model (129k-token vocabulary) is the slow part of these tests: one engine,
// tokenizer and recipe serve every test that does not close them.
var shared struct {
	once   sync.Once
	engine *Engine
	tok    *Tokenizer
	recipe *Recipe
	err    error
}

func tinyShared(t testing.TB) (*Engine, *Tokenizer, *Recipe) {
	model := tinyModel(t)
	shared.once.Do(func() {
		if shared.engine, shared.err = NewEngine(model, nil); shared.err != nil {
			return
		}
		if shared.tok, shared.err = NewTokenizer(model); shared.err != nil {
			return
		}
		shared.recipe, shared.err = NewRecipe(model, nil)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.engine, shared.tok, shared.recipe
}

func mustOptions(t testing.TB, m map[string]any) *Options {
	o, err := OptionsFromMap(m)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func drain(t testing.TB, r *Request) []Chunk {
	var out []Chunk
	for r.Next(bgctx) {
		out = append(out, r.Chunk())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func ids(chunks []Chunk) []int32 {
	var out []int32
	for _, c := range chunks {
		out = append(out, c.TokenIDs...)
	}
	return out
}
