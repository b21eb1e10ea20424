// Engine and Request: greedy output equals transformers' on the DeepSeek-V4 fixtures, the
// channel adapter equals Next, cancel and context end a stream promptly, Close is idempotent.
package deepinfer

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

var bgctx = context.Background()

func greedyOptions(t testing.TB, maxTokens int) *Options {
	return mustOptions(t, map[string]any{"temperature": 0.0, "max_tokens": maxTokens, "ignore_eos": 1})
}

func TestGreedyEqualsTransformers(t *testing.T) {
	for _, fx := range v4Fixtures(t) {
		e, err := NewEngine(fx.Dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Submit(fx.Prompt, greedyOptions(t, len(fx.Greedy)))
		if err != nil {
			t.Fatal(err)
		}
		chunks := drain(t, r)
		if got := ids(chunks); !reflect.DeepEqual(got, fx.Greedy) {
			t.Errorf("%s: got %v, transformers %v", fx.Dir, got, fx.Greedy)
		}
		last := chunks[len(chunks)-1]
		if !last.IsFinal || last.FinishName() != "length" {
			t.Errorf("%s: last chunk %+v", fx.Dir, last)
		}
		r.Close()
		r.Close()
		e.Close()
		e.Close()
	}
}

func TestChannelAdapterEqualsNextAndTextIsUTF8(t *testing.T) {
	e, tok, _ := tinyShared(t)
	prompt, _ := tok.Encode("你好, the weather is", true, true)
	opts := mustOptions(t, map[string]any{"temperature": 0.9, "seed": 3, "max_tokens": 32, "ignore_eos": 1})
	r1, _ := e.Submit(prompt, opts)
	defer r1.Close()
	viaNext := drain(t, r1)
	r2, _ := e.Submit(prompt, opts)
	defer r2.Close()
	var viaChan []Chunk
	for c := range r2.Chan(bgctx) {
		viaChan = append(viaChan, c)
	}
	if r2.Err() != nil {
		t.Fatal(r2.Err())
	}
	if !reflect.DeepEqual(ids(viaNext), ids(viaChan)) || len(ids(viaNext)) != 32 {
		t.Fatalf("next %v chan %v", ids(viaNext), ids(viaChan))
	}
	text := ""
	for _, c := range viaNext {
		if !utf8.ValidString(c.Text) {
			t.Errorf("chunk text not UTF-8: %q", c.Text)
		}
		text += c.Text
	}
	want, err := tok.Decode(ids(viaNext), true)
	// Bytes that never form a character become U+FFFD in both, one per maximal ill-formed
	// subpart, so the stream equals the one-shot decode exactly.
	if err != nil || text != want {
		t.Errorf("stream text %q, decode %q (%v)", text, want, err)
	}
}

func TestLogprobsFollowTheGreedyChoice(t *testing.T) {
	e, _, _ := tinyShared(t)
	opts := mustOptions(t, map[string]any{"temperature": 0.0, "max_tokens": 5, "ignore_eos": 1,
		"logprobs": 1, "top_logprobs": 2})
	r, _ := e.Submit([]int32{10, 20, 30}, opts)
	defer r.Close()
	n := 0
	for _, c := range drain(t, r) {
		for i, id := range c.TokenIDs {
			n++
			if c.TopLogprobIDs[i][0] != id || c.Logprobs[i] > 0 || len(c.TopLogprobs[i]) != 2 ||
				c.TopLogprobs[i][0] < c.TopLogprobs[i][1] {
				t.Errorf("token %d: logprob %v top %v %v", id, c.Logprobs[i], c.TopLogprobIDs[i], c.TopLogprobs[i])
			}
		}
	}
	if n != 5 {
		t.Errorf("%d tokens", n)
	}
}

// longTokens is as long as the tiny model allows: minutes of work even on a fast machine, so a
// stream that ends "cancelled" was ended by the cancel, never by running out of tokens first.
const longTokens = 16000

// promptly bounds how long a cancel may take to end a stream: one engine step plus a wake-up,
// with room for a loaded CI machine (a cancel that did not work runs the whole long request).
const promptly = 10 * time.Second

// ownEngine opens an engine of its own (quick while the shared tokenizer is loaded) for a test
// that closes it or needs it idle.
func ownEngine(t *testing.T, maxNumSeqs int) *Engine {
	tinyShared(t)
	opts := mustOptions(t, map[string]any{"max_num_seqs": maxNumSeqs})
	defer opts.Close()
	e, err := NewEngine(tinyModel(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func longRequest(t *testing.T, e *Engine) *Request {
	r, err := e.Submit([]int32{1, 2, 3}, greedyOptions(t, longTokens))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCancelFromAnotherGoroutineEndsPromptly(t *testing.T) {
	e, _, _ := tinyShared(t)
	r := longRequest(t, e)
	defer r.Close()
	if !r.Next(bgctx) {
		t.Fatal(r.Err())
	}
	start := time.Now()
	go r.Cancel()
	var last Chunk
	n := 0
	for r.Next(bgctx) {
		last = r.Chunk()
		n += len(last.TokenIDs)
	}
	if r.Err() != nil || last.FinishName() != "cancelled" || !last.IsFinal || n >= longTokens {
		t.Fatalf("err %v last %+v n %d", r.Err(), last, n)
	}
	if d := time.Since(start); d > promptly {
		t.Errorf("cancel took %v", d)
	}
}

func TestContextDeadlineCancelsTheRequest(t *testing.T) {
	e, _, _ := tinyShared(t)
	r := longRequest(t, e)
	defer r.Close()
	ctx, cancel := context.WithTimeout(bgctx, 100*time.Millisecond)
	defer cancel()
	ch := r.Chan(ctx)
	for range ch {
	}
	if !errors.Is(r.Err(), context.DeadlineExceeded) {
		t.Fatalf("err %v", r.Err())
	}
	if d := time.Since(deadlineOf(ctx)); d > promptly {
		t.Errorf("context end took %v after the deadline", d)
	}
}

// deadlineOf is when ctx's deadline passed (or now, if it has not).
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok && d.Before(time.Now()) {
		return d
	}
	return time.Now()
}

func TestCloseWhileAnotherGoroutinePolls(t *testing.T) {
	e, _, _ := tinyShared(t)
	r := longRequest(t, e)
	var wg sync.WaitGroup
	polling := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		first := true
		for r.Next(bgctx) {
			if first {
				close(polling) // it has a chunk and goes on polling: close races a live poller
				first = false
			}
		}
	}()
	<-polling
	r.Close()
	r.Close()
	wg.Wait()
	if r.Err() != nil && !errors.Is(r.Err(), ErrState) {
		t.Errorf("err %v", r.Err())
	}
}

// An engine closed while the long request is far from done.
func TestRequestOutlivesItsEngine(t *testing.T) {
	e := ownEngine(t, 1)
	r := longRequest(t, e)
	defer r.Close()
	e.Close()
	e.Close()
	chunks := drain(t, r)
	if chunks[len(chunks)-1].FinishName() != "cancelled" || !chunks[len(chunks)-1].IsFinal {
		t.Errorf("last %+v", chunks[len(chunks)-1])
	}
	if _, err := e.Submit([]int32{1}, nil); !errors.Is(err, ErrState) {
		t.Errorf("submit after close: %v", err)
	}
}

// Requests nobody closes are cancelled and freed by their finalizer (the safety net): the
// engine goes idle although each request has minutes of work left. The loop ends as soon as that
// happens; its deadline only absorbs a slow machine and is far below the requests' own length.
func TestForgottenRequestsAreCancelledByTheFinalizer(t *testing.T) {
	e := ownEngine(t, 2)
	defer e.Close()
	for i := 0; i < 4; i++ {
		longRequest(t, e) // dropped at once
	}
	var m map[string]any
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		runtime.GC()
		js, err := e.Metrics(false)
		if err != nil {
			t.Fatal(err)
		}
		m = map[string]any{}
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatal(err)
		}
		// Finished (any reason) = submitted: a request not yet scheduled counts as neither
		// running nor waiting, so those two alone read idle right after the submits.
		if m["requests_finished"] == m["requests_submitted"] && m["num_requests_running"] == 0.0 &&
			m["num_requests_waiting"] == 0.0 && m["kv_blocks_free"] == m["kv_blocks_total"] {
			return
		}
	}
	t.Fatalf("unreachable requests still run: %v", m)
}

func TestErrorsCarryStatusAndMessage(t *testing.T) {
	_, err := NewEngine(t.TempDir(), nil)
	var de *Error
	if !errors.As(err, &de) || (de.Status != StatusNotFound && de.Status != StatusIO) || de.Message == "" {
		t.Fatalf("missing model: %v", err)
	}
	e, _, _ := tinyShared(t)
	_, err = e.Submit([]int32{1, 2}, mustOptions(t, map[string]any{"top_p": 1.5}))
	if !errors.Is(err, ErrInvalidArg) || !errors.As(err, &de) || !strings.Contains(de.Message, "top_p") {
		t.Errorf("bad top_p: %v", err)
	}
	if _, err := e.Submit(nil, nil); !errors.Is(err, ErrInvalidArg) {
		t.Errorf("empty prompt: %v", err)
	}
	o, _ := NewOptions()
	if err := o.SetInt("no_such_key", 1); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "no_such_key") {
		t.Errorf("unknown key: %v", err)
	}
	if err := o.SetString("temperature", "hot"); !errors.Is(err, ErrInvalidArg) {
		t.Errorf("wrong type: %v", err)
	}
	info, err := e.Info()
	if err != nil || !strings.Contains(info, "vocab_size") {
		t.Errorf("info %q %v", info, err)
	}
	if m, err := e.Metrics(true); err != nil || !strings.Contains(m, "# TYPE") {
		t.Errorf("metrics %v", err)
	}
	if m, err := e.Metrics(false); err != nil || m == "" || m[0] != '{' {
		t.Errorf("metrics json %v", err)
	}
}

func TestOptionsRoundTrip(t *testing.T) {
	o, err := NewOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	must := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatal(err)
		}
	}
	must(o.SetFloat("temperature", 0.25))
	must(o.SetInt("max_tokens", 9))
	must(o.SetString("device", "cpu"))
	must(o.SetJSON("stop", `["x"]`))
	c, err := o.Clone()
	must(err)
	defer c.Close()
	must(o.UpdateJSON(`{"max_tokens": 3}`))
	if v, ok, _ := c.Int("max_tokens"); !ok || v != 9 {
		t.Errorf("clone max_tokens %v", v)
	}
	if v, ok, _ := o.Float("temperature"); !ok || v != 0.25 {
		t.Errorf("temperature %v", v)
	}
	if v, ok, _ := o.String("device"); !ok || v != "cpu" {
		t.Errorf("device %v", v)
	}
	if v, ok, _ := o.JSON("stop"); !ok || v != `["x"]` {
		t.Errorf("stop %v", v)
	}
	if _, ok, err := o.Int("seed"); ok || err != nil {
		t.Errorf("unset seed: %v %v", ok, err)
	}
	js, err := o.ToJSON()
	if err != nil || !strings.Contains(js, `"max_tokens":3`) {
		t.Errorf("to_json %s %v", js, err)
	}
	o.Close()
	o.Close()
	if err := o.SetInt("max_tokens", 1); !errors.Is(err, ErrState) {
		t.Errorf("closed: %v", err)
	}
}
