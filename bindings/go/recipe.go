// Recipe and Prepared: di_recipe / di_prepared. API request bodies (Chat Completions, Responses,
// Messages) become DeepSeek prompts, token ids, sampling and parser options. Both immutable.
package deepinfer

/*
#include <stdlib.h>
#include "deepinfer.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Protocol names an API whose request bodies Recipe.Prepare accepts.
type Protocol int32

const (
	ProtocolChatCompletions Protocol = C.DI_PROTOCOL_CHAT_COMPLETIONS
	ProtocolResponses       Protocol = C.DI_PROTOCOL_RESPONSES
	ProtocolMessages        Protocol = C.DI_PROTOCOL_MESSAGES
)

// Recipe turns API requests into prompts for one served model.
type Recipe struct {
	mu  sync.RWMutex
	ptr *C.di_recipe
}

// NewRecipe loads the tokenizer at tokenizerPath ("" for none: prompts carry text only) and
// reads the recipe_* keys of options (may be nil).
func NewRecipe(tokenizerPath string, options *Options) (*Recipe, error) {
	cp, n := cBytes(tokenizerPath)
	defer C.free(unsafe.Pointer(cp))
	o, err := options.lock()
	if err != nil {
		return nil, err
	}
	defer options.unlock()
	var p *C.di_recipe
	var cerr *C.di_error
	if err := toError(C.di_recipe_create(cp, n, o, &p, &cerr), cerr); err != nil {
		return nil, err
	}
	r := &Recipe{ptr: p}
	runtime.SetFinalizer(r, (*Recipe).Close)
	return r, nil
}

// Close releases the recipe once running calls return; prepared requests stay valid. Idempotent.
func (r *Recipe) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	C.di_recipe_destroy(r.ptr)
	r.ptr = nil
}

// Prepare validates and renders a request body. A rejected request returns an *Error whose
// HTTPStatus and Body are the API's error response.
func (r *Recipe) Prepare(protocol Protocol, body []byte) (*Prepared, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ptr == nil {
		return nil, ErrClosed
	}
	cb, n := cBytes(string(body))
	defer C.free(unsafe.Pointer(cb))
	var p *C.di_prepared
	var cerr *C.di_error
	err := toError(C.di_recipe_prepare(r.ptr, C.int32_t(protocol), cb, n, &p, &cerr), cerr)
	runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	pr := &Prepared{ptr: p}
	runtime.SetFinalizer(pr, (*Prepared).Close)
	return pr, nil
}

// Prepared is one request ready for the engine. Its getters copy from the C object.
type Prepared struct {
	mu  sync.RWMutex
	ptr *C.di_prepared
}

// Close releases it. Idempotent.
func (p *Prepared) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	C.di_prepared_destroy(p.ptr)
	p.ptr = nil
}

// text reads one string accessor; "" once closed.
func (p *Prepared) text(f func(*C.di_prepared, *C.size_t) *C.char) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.ptr == nil {
		return ""
	}
	var n C.size_t
	s := f(p.ptr, &n)
	out := C.GoStringN(s, C.int(n))
	runtime.KeepAlive(p)
	return out
}

// Prompt is the rendered prompt text.
func (p *Prepared) Prompt() string {
	return p.text(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_prompt(h, n) })
}

// SamplingJSON is the request's sampling options as a JSON object of sampling keys.
func (p *Prepared) SamplingJSON() string {
	return p.text(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_sampling_json(h, n) })
}

// StopSequencesJSON is the request's stop strings as a JSON array (applied by the parser).
func (p *Prepared) StopSequencesJSON() string {
	return p.text(func(h *C.di_prepared, n *C.size_t) *C.char {
		return C.di_prepared_stop_sequences_json(h, n)
	})
}

// ConstraintJSON is the output constraint ({"type": "none"} when there is none).
func (p *Prepared) ConstraintJSON() string {
	return p.text(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_constraint_json(h, n) })
}

// ParserOptionsJSON is what NewParser takes for this request's output.
func (p *Prepared) ParserOptionsJSON() string {
	return p.text(func(h *C.di_prepared, n *C.size_t) *C.char {
		return C.di_prepared_parser_options_json(h, n)
	})
}

// ImagesJSON lists the images the prompt's placeholders stand for.
func (p *Prepared) ImagesJSON() string {
	return p.text(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_images_json(h, n) })
}

// InfoJSON holds facts about the request: model, encoding, protocol, prompt_tokens, thinking.
func (p *Prepared) InfoJSON() string {
	return p.text(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_info_json(h, n) })
}

// ImageData is image index as the model takes it (WebP bytes), or nil past the last image.
func (p *Prepared) ImageData(index int) []byte {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.ptr == nil || index < 0 {
		return nil
	}
	var n C.size_t
	data := C.di_prepared_image_data(p.ptr, C.size_t(index), &n)
	if data == nil {
		return nil
	}
	out := C.GoBytes(unsafe.Pointer(data), C.int(n))
	runtime.KeepAlive(p)
	return out
}

// Stream reports whether the client asked for a streamed response.
func (p *Prepared) Stream() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.ptr != nil && C.di_prepared_stream(p.ptr) != 0
}

// TokenIDs are the prompt's ids (nil when the recipe has no tokenizer).
func (p *Prepared) TokenIDs() []int32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.ptr == nil {
		return nil
	}
	var n C.size_t
	ids := C.di_prepared_token_ids(p.ptr, &n)
	if n == 0 {
		return nil
	}
	return append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(ids)), int(n))...)
}

// SpecialRanges are the id ranges that came from template text.
func (p *Prepared) SpecialRanges() []Range {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.ptr == nil {
		return nil
	}
	var n C.size_t
	r := C.di_prepared_special_ranges(p.ptr, &n)
	if n == 0 {
		return nil
	}
	flat := unsafe.Slice((*uint32)(unsafe.Pointer(r)), int(2*n))
	out := make([]Range, int(n))
	for i := range out {
		out[i] = Range{flat[2*i], flat[2*i+1]}
	}
	return out
}
