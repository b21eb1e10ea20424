// Recipe and Prepared: di_recipe / di_prepared. API request bodies (Chat Completions, Responses,
// Messages) become DeepSeek prompts, token ids, sampling and parser options. Both immutable.
package deepinfer

/*
#include <stdlib.h>
#include "deepinfer.h"
*/
import "C"

import (
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
	handle[C.di_recipe]
}

// NewRecipe loads the tokenizer at tokenizerPath ("" for none: prompts carry text only) and
// reads the recipe_* keys of options (may be nil).
func NewRecipe(tokenizerPath string, options *Options) (*Recipe, error) {
	p, err := createWithOptions(tokenizerPath, options,
		func(cp *C.char, n C.size_t, o *C.di_options, out **C.di_recipe, cerr **C.di_error) C.di_status {
			return C.di_recipe_create(cp, n, o, out, cerr)
		})
	if err != nil {
		return nil, err
	}
	return withFinalizer(&Recipe{handle[C.di_recipe]{ptr: p}}), nil
}

// Close releases the recipe once running calls return; prepared requests stay valid. Idempotent.
func (r *Recipe) Close() {
	r.close(func(p *C.di_recipe) { C.di_recipe_destroy(p) })
}

// Prepare validates and renders a request body. A rejected request returns an *Error whose
// HTTPStatus and Body are the API's error response.
func (r *Recipe) Prepare(protocol Protocol, body []byte) (*Prepared, error) {
	cb, n := cBytes(string(body))
	defer C.free(unsafe.Pointer(cb))
	var p *C.di_prepared
	if err := r.call(func(rp *C.di_recipe, cerr **C.di_error) C.di_status {
		return C.di_recipe_prepare(rp, C.int32_t(protocol), cb, n, &p, cerr)
	}); err != nil {
		return nil, err
	}
	return withFinalizer(&Prepared{handle[C.di_prepared]{ptr: p}}), nil
}

// Prepared is one request ready for the engine. Its getters copy from the C object.
type Prepared struct {
	handle[C.di_prepared]
}

// Close releases it. Idempotent.
func (p *Prepared) Close() {
	p.close(func(h *C.di_prepared) { C.di_prepared_destroy(h) })
}

// get runs f on the object unless it is closed (the getters then return their zero value).
func (p *Prepared) get(f func(*C.di_prepared)) {
	_ = p.use(func(h *C.di_prepared) error {
		f(h)
		return nil
	})
}

// str reads one string accessor; "" once closed.
func (p *Prepared) str(f func(*C.di_prepared, *C.size_t) *C.char) (out string) {
	p.get(func(h *C.di_prepared) {
		var n C.size_t
		out = C.GoStringN(f(h, &n), C.int(n))
	})
	return out
}

// Prompt is the rendered prompt text.
func (p *Prepared) Prompt() string {
	return p.str(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_prompt(h, n) })
}

// SamplingJSON is the request's sampling options as a JSON object of sampling keys.
func (p *Prepared) SamplingJSON() string {
	return p.str(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_sampling_json(h, n) })
}

// StopSequencesJSON is the request's stop strings as a JSON array (applied by the parser).
func (p *Prepared) StopSequencesJSON() string {
	return p.str(func(h *C.di_prepared, n *C.size_t) *C.char {
		return C.di_prepared_stop_sequences_json(h, n)
	})
}

// ConstraintJSON is the output constraint ({"type": "none"} when there is none).
func (p *Prepared) ConstraintJSON() string {
	return p.str(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_constraint_json(h, n) })
}

// ParserOptionsJSON is what NewParser takes for this request's output.
func (p *Prepared) ParserOptionsJSON() string {
	return p.str(func(h *C.di_prepared, n *C.size_t) *C.char {
		return C.di_prepared_parser_options_json(h, n)
	})
}

// ImagesJSON lists the images the prompt's placeholders stand for.
func (p *Prepared) ImagesJSON() string {
	return p.str(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_images_json(h, n) })
}

// InfoJSON holds facts about the request: model, encoding, protocol, prompt_tokens, thinking.
func (p *Prepared) InfoJSON() string {
	return p.str(func(h *C.di_prepared, n *C.size_t) *C.char { return C.di_prepared_info_json(h, n) })
}

// ImageData is image index as the model takes it (WebP bytes), or nil past the last image.
func (p *Prepared) ImageData(index int) (out []byte) {
	if index < 0 {
		return nil
	}
	p.get(func(h *C.di_prepared) {
		var n C.size_t
		if data := C.di_prepared_image_data(h, C.size_t(index), &n); data != nil {
			out = C.GoBytes(unsafe.Pointer(data), C.int(n))
		}
	})
	return out
}

// Stream reports whether the client asked for a streamed response.
func (p *Prepared) Stream() (stream bool) {
	p.get(func(h *C.di_prepared) { stream = C.di_prepared_stream(h) != 0 })
	return stream
}

// TokenIDs are the prompt's ids (nil when the recipe has no tokenizer).
func (p *Prepared) TokenIDs() (out []int32) {
	p.get(func(h *C.di_prepared) {
		var n C.size_t
		if ids := C.di_prepared_token_ids(h, &n); n > 0 {
			out = append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(ids)), int(n))...)
		}
	})
	return out
}

// SpecialRanges are the id ranges that came from template text.
func (p *Prepared) SpecialRanges() (out []Range) {
	p.get(func(h *C.di_prepared) {
		var n C.size_t
		if r := C.di_prepared_special_ranges(h, &n); n > 0 {
			out = toRanges(r, n)
		}
	})
	return out
}
