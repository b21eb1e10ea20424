// Recipe, Parser and Tokenizer: rejected requests carry the API's error, the DeepSeek recipe's
// traces parse to their expected content, and a chat streams through recipe, engine and parser.
package deepinfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPrepareAndRejections(t *testing.T) {
	_, tok, r := tinyShared(t)
	p, err := r.Prepare(ProtocolChatCompletions, []byte(`{"model":"deepseek-v4","max_tokens":5,
		"messages":[{"role":"user","content":"Hi there"}],"stop":["X"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.Contains(p.Prompt(), "Hi there") || len(p.TokenIDs()) == 0 || p.Stream() ||
		p.StopSequencesJSON() != `["X"]` || !strings.Contains(p.SamplingJSON(), `"max_tokens":5`) ||
		!strings.Contains(p.ConstraintJSON(), "none") || p.ImagesJSON() != "[]" ||
		!strings.Contains(p.InfoJSON(), `"protocol":"chat"`) || len(p.SpecialRanges()) == 0 {
		t.Errorf("prepared: %q %v %s %s %s %s", p.Prompt(), p.TokenIDs(), p.StopSequencesJSON(),
			p.SamplingJSON(), p.ConstraintJSON(), p.InfoJSON())
	}
	if text, _ := tok.Decode(p.TokenIDs(), false); text != p.Prompt() {
		t.Errorf("ids decode to %q, prompt %q", text, p.Prompt())
	}

	_, err = r.Prepare(ProtocolChatCompletions, []byte(`{"model":"deepseek-v4","messages":"nope"}`))
	var de *Error
	if !errors.As(err, &de) || de.Status != StatusInvalidArg || de.HTTPStatus() != 400 ||
		!bytes.Contains(de.Body(), []byte("messages")) {
		t.Errorf("bad messages: %v", err)
	}
	_, err = r.Prepare(ProtocolMessages, []byte(`{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`))
	if !errors.As(err, &de) || !errors.Is(err, ErrNotFound) || de.HTTPStatus() != 404 {
		t.Errorf("unknown model: %v", err)
	}
}

type traceCase struct {
	Name         string          `json:"name"`
	Options      map[string]any  `json:"options"`
	Chunks       json.RawMessage `json:"chunks"`
	EngineFinish string          `json:"engine_finish"`
	Expect       struct {
		Reasoning string            `json:"reasoning"`
		Content   string            `json:"content"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	} `json:"expect"`
}

var finishByName = map[string]int32{"stop": FinishStop, "length": FinishLength,
	"stop_sequence": FinishStopSequence, "cancelled": FinishCancelled, "error": FinishError}

func TestRecipeTracesParseToExpectedContent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "tests", "fixtures", "recipe_stream", "traces.json"))
	if err != nil {
		t.Fatal(err)
	}
	var traces struct{ Cases []traceCase }
	if err := json.Unmarshal(b, &traces); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range traces.Cases {
		var chunks []string
		if json.Unmarshal(c.Chunks, &chunks) != nil || len(c.Expect.ToolCalls) > 0 {
			continue // token-id and tool-call cases are covered by the C++ suite
		}
		n++
		c.Options["protocol"] = "chat"
		opts, _ := json.Marshal(c.Options)
		p, err := NewParser(string(opts))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for i, ch := range chunks {
			out := Output{Text: ch, PromptTokens: -1, CachedPromptTokens: -1, CompletionTokens: -1}
			if i == len(chunks)-1 {
				out.FinishReason = finishByName[c.EngineFinish]
			}
			if err := p.Push(out, nil); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		if !p.Ended() {
			p.Finish(nil) // a stream that ended without a finish reason
		}
		body, err := p.Response()
		p.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var resp struct {
			Choices []struct {
				Message struct {
					Content   *string `json:"content"`
					Reasoning *string `json:"reasoning_content"`
				}
			}
		}
		json.Unmarshal([]byte(body), &resp)
		m := resp.Choices[0].Message
		if deref(m.Content) != c.Expect.Content || deref(m.Reasoning) != c.Expect.Reasoning {
			t.Errorf("%s: content %q reasoning %q, want %q %q", c.Name, deref(m.Content),
				deref(m.Reasoning), c.Expect.Content, c.Expect.Reasoning)
		}
	}
	if n == 0 {
		t.Fatal("no text traces")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestChatStreamsThroughRecipeEngineAndParser(t *testing.T) {
	e, _, r := tinyShared(t)
	p, err := r.Prepare(ProtocolMessages, []byte(`{"model":"deepseek-v4","max_tokens":12,"stream":true,
		"messages":[{"role":"user","content":"Tell me a story"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	parser, err := NewParser(p.ParserOptionsJSON())
	if err != nil {
		t.Fatal(err)
	}
	defer parser.Close()
	req, err := e.SubmitPrepared(p)
	if err != nil {
		t.Fatal(err)
	}
	defer req.Close()
	var events []Event
	for req.Next(bgctx) {
		c := req.Chunk()
		if err := parser.PushChunk(&c, func(ev Event) { events = append(events, ev) }); err != nil {
			t.Fatal(err)
		}
	}
	if req.Err() != nil || !parser.Ended() || len(events) < 2 {
		t.Fatalf("err %v ended %v events %d", req.Err(), parser.Ended(), len(events))
	}
	if events[0].Name != "message_start" || events[len(events)-1].Name != "message_stop" {
		t.Errorf("first %q last %q", events[0].Name, events[len(events)-1].Name)
	}
	for _, ev := range events {
		var v map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &v); err != nil || v["type"] != ev.Name {
			t.Errorf("event %s: %s", ev.Name, ev.Data)
		}
	}
	if _, err := parser.Response(); err != nil {
		t.Error(err)
	}
	if err := parser.Finish(nil); err != nil {
		t.Error(err)
	}
}

func TestParserFromPreparedUsesTheRequestAndOverrides(t *testing.T) {
	_, _, r := tinyShared(t)
	p, err := r.Prepare(ProtocolChatCompletions, []byte(`{"model":"deepseek-v4","stop":["X"],
		"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.ImageData(0) != nil {
		t.Errorf("image data without images")
	}
	parser, err := NewParserFromPrepared(p, `{"request_id":"go1"}`)
	if err != nil {
		t.Fatal(err)
	}
	defer parser.Close()
	parser.Push(Output{Text: "Hello X and more", FinishReason: 1, PromptTokens: -1,
		CachedPromptTokens: -1, CompletionTokens: -1}, nil)
	body, err := parser.Response()
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID      string `json:"id"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.ID != "chatcmpl-go1" ||
		len(resp.Choices) != 1 || resp.Choices[0].Message.Content != "Hello " {
		t.Errorf("response %s (%v)", body, err)
	}
	if _, err := NewParserFromPrepared(p, `{"bogus":1}`); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("bad override: %v", err)
	}
}

func TestParserSplitCharactersAndBadOptions(t *testing.T) {
	p, err := NewParser(`{"protocol":"chat"}`)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := "猫と犬"
	for i := 0; i < len(s); i++ {
		p.Push(Output{Text: s[i : i+1], PromptTokens: -1, CachedPromptTokens: -1, CompletionTokens: -1}, nil)
	}
	var n int
	if err := p.Finish(func(Event) { n++ }); err != nil {
		t.Fatal(err)
	}
	body, _ := p.Response()
	if !strings.Contains(body, s) {
		t.Errorf("body %s", body)
	}
	if _, err := NewParser(`{"protocol":7}`); err == nil || !strings.Contains(err.Error(), "protocol") {
		t.Errorf("bad protocol: %v", err)
	}
}

func TestTokenizerPiecesSegmentsAndErrors(t *testing.T) {
	_, tok, _ := tinyShared(t)
	for _, text := range []string{"Hello, world!", "naïve café — 東京 🚀", ""} {
		ids, err := tok.Encode(text, false, false)
		if err != nil {
			t.Fatal(err)
		}
		var joined []byte
		for _, id := range ids {
			b, err := tok.TokenToPiece(id)
			if err != nil {
				t.Fatal(err)
			}
			joined = append(joined, b...)
		}
		if string(joined) != text {
			t.Errorf("pieces %q != %q", joined, text)
		}
	}
	sp, _ := tok.SpecialIDs()
	bos, err := tok.TokenID("<｜begin▁of▁sentence｜>")
	if err != nil || bos != sp.BOS {
		t.Errorf("bos %d %v special %+v", bos, err, sp)
	}
	if _, err := tok.TokenID("no such token at all"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing token: %v", err)
	}
	a, _ := tok.Encode("<｜User｜>", true, false)
	b, _ := tok.Encode("<｜User｜> hi", false, false)
	got, ranges, err := tok.EncodeSegments([]Segment{{"<｜User｜>", true}, {"<｜User｜> hi", false}})
	if err != nil || !reflect.DeepEqual(got, append(append([]int32{}, a...), b...)) ||
		!reflect.DeepEqual(ranges, []Range{{0, uint32(len(a))}}) {
		t.Errorf("segments %v %v %v", got, ranges, err)
	}
	vs, _ := tok.VocabSize()
	if _, err := tok.Decode([]int32{1, int32(vs) + 5}, false); !errors.Is(err, ErrInvalidArg) {
		t.Errorf("bad id: %v", err)
	}
	var c Tokenizer // a closed (zero) tokenizer
	if _, err := c.Encode("x", true, false); !errors.Is(err, ErrState) {
		t.Errorf("closed: %v", err)
	}
}
