// SubmitText: a text prompt gets the ids the other bindings give it (Python's Engine.submit(str),
// LLM.generate), checked against the CLI's `tokenize --add-special`; a closed engine refuses it.
package deepinfer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func cliTokenize(t *testing.T, model, text string) []int32 {
	build := os.Getenv("DI_BUILD_DIR")
	if build == "" {
		build = filepath.Join(repoRoot, "build")
	}
	in, _ := json.Marshal(map[string]string{"text": text})
	cmd := exec.Command(filepath.Join(build, "bin", "deepinfer"), "tokenize", "--tokenizer", model, "--add-special")
	cmd.Stdin = strings.NewReader(string(in) + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("deepinfer tokenize: %v", err)
	}
	var r struct {
		IDs []int32 `json:"ids"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("tokenize output %q: %v", out, err)
	}
	return r.IDs
}

func TestSubmitTextUsesTheIdsOfEveryBinding(t *testing.T) {
	e, _, _ := tinyShared(t)
	model := tinyModel(t)
	const prompt = "The capital of France is"
	want := cliTokenize(t, model, prompt)
	r, err := e.SubmitText(prompt, greedyOptions(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := drain(t, r)
	if len(got) == 0 || got[0].PromptTokens != int64(len(want)) {
		t.Fatalf("prompt tokens: got %v, want %d (%v)", got, len(want), want)
	}
	byIDs, err := e.Submit(want, greedyOptions(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer byIDs.Close()
	if a, b := ids(got), ids(drain(t, byIDs)); !reflect.DeepEqual(a, b) {
		t.Errorf("SubmitText generated %v, Submit of the CLI's ids %v", a, b)
	}
}

func TestSubmitTextAfterCloseIsErrClosed(t *testing.T) {
	e := ownEngine(t, 1)
	e.Close()
	if _, err := e.SubmitText("Hi", nil); err != ErrClosed {
		t.Fatalf("got %v, want ErrClosed", err)
	}
}
