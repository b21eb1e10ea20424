// Parser: di_parser. Model output (text, token ids or engine chunks) in, the API's events out.
// The C callback runs synchronously inside the push on the calling goroutine and reaches Go
// through a cgo.Handle (never a Go pointer held by C); events are handed to the caller's
// function after the C call returns, so a slow or panicking handler never sits inside C.
package deepinfer

/*
#include <stdint.h>
#include <stdlib.h>
#include "deepinfer.h"

void goParseEvent(void* user, char* event, size_t event_len, char* data, size_t data_len);

static di_status parse_push_go(di_parser* p, const di_parse_chunk* c, uintptr_t h, di_error** err) {
  return di_parse_push(p, c, (di_parse_event_fn)goParseEvent, (void*)h, err);
}
static di_status parse_push_chunk_go(di_parser* p, const di_chunk* c, uintptr_t h, di_error** err) {
  return di_parse_push_chunk(p, c, (di_parse_event_fn)goParseEvent, (void*)h, err);
}
static di_status parse_finish_go(di_parser* p, uintptr_t h, di_error** err) {
  return di_parse_finish(p, (di_parse_event_fn)goParseEvent, (void*)h, err);
}
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Event is one API event: Name is the SSE event name ("" for Chat Completions), Data its JSON
// payload (or Chat's closing "[DONE]").
type Event struct {
	Name string
	Data string
}

type eventSink struct{ events []Event }

// Finish reasons of Parser.Push (equal to the engine's Chunk.FinishReason values).
const (
	FinishNone         int32 = C.DI_FINISH_NONE
	FinishStop         int32 = C.DI_FINISH_STOP
	FinishLength       int32 = C.DI_FINISH_LENGTH
	FinishStopSequence int32 = C.DI_FINISH_STOP_SEQUENCE
	FinishCancelled    int32 = C.DI_FINISH_CANCELLED
	FinishError        int32 = C.DI_FINISH_ERROR
)

// Output is one piece of model output for Parser.Push. Counts < 0 are unknown.
type Output struct {
	Text               string
	TokenIDs           []int32
	FinishReason       int32
	PromptTokens       int64
	CachedPromptTokens int64
	CompletionTokens   int64
	ErrorMessage       string
}

// Parser turns one request's output into its API's events. One stream per parser; calls are
// serialized.
type Parser struct {
	handle[C.di_parser] // write-locked by every call: one stream, calls never interleave
	ended               bool
}

// NewParser makes a parser from parsing options as JSON (Prepared.ParserOptionsJSON, or
// {"protocol": "chat"|"responses"|"messages", ...}).
func NewParser(optionsJSON string) (*Parser, error) {
	p, err := createFromString(optionsJSON, func(cj *C.char, n C.size_t, out **C.di_parser, cerr **C.di_error) C.di_status {
		return C.di_parser_create_from_json(cj, n, out, cerr)
	})
	if err != nil {
		return nil, err
	}
	return newParser(p), nil
}

func newParser(p *C.di_parser) *Parser {
	return withFinalizer(&Parser{handle: handle[C.di_parser]{ptr: p}})
}

// NewParserFromPrepared makes a parser for a prepared request's output (di_parser_create): its
// protocol, tools, stop strings and control tokens, with token ids decoded by the recipe's
// tokenizer. overridesJSON ("" for none) replaces parser options, e.g. {"request_id": "abc"}.
func NewParserFromPrepared(prepared *Prepared, overridesJSON string) (*Parser, error) {
	cj, n := cBytes(overridesJSON)
	defer C.free(unsafe.Pointer(cj))
	var p *C.di_parser
	if err := prepared.call(func(h *C.di_prepared, cerr **C.di_error) C.di_status {
		return C.di_parser_create(h, cj, n, &p, cerr)
	}); err != nil {
		return nil, err
	}
	return newParser(p), nil
}

// Close releases the parser. Idempotent.
func (p *Parser) Close() {
	p.close(func(h *C.di_parser) { C.di_parser_destroy(h) })
}

// Ended reports whether the terminal event was delivered.
func (p *Parser) Ended() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// run calls into C with a handle to a fresh sink, then hands the events to onEvent (may be nil).
func (p *Parser) run(call func(ptr *C.di_parser, h C.uintptr_t, cerr **C.di_error) C.di_status,
	onEvent func(Event)) error {
	p.mu.Lock()
	if p.ptr == nil {
		p.mu.Unlock()
		return ErrClosed
	}
	sink := &eventSink{}
	h := cgo.NewHandle(sink)
	var cerr *C.di_error
	st := call(p.ptr, C.uintptr_t(h), &cerr)
	h.Delete()
	if st == C.DI_END_OF_STREAM {
		p.ended = true
	}
	p.mu.Unlock()
	runtime.KeepAlive(p)
	if err := toError(st, cerr); err != nil {
		return err
	}
	if onEvent != nil {
		for _, e := range sink.events {
			onEvent(e)
		}
	}
	return nil
}

// Push feeds one piece of output and passes each event it completes to onEvent, in order.
func (p *Parser) Push(out Output, onEvent func(Event)) error {
	ct, nt := cBytes(out.Text)
	defer C.free(unsafe.Pointer(ct))
	ids, nids := cIDs(out.TokenIDs)
	defer C.free(unsafe.Pointer(ids))
	ce, ne := cBytes(out.ErrorMessage)
	defer C.free(unsafe.Pointer(ce))
	// The chunk itself holds C pointers, so it lives in C memory too.
	c := (*C.di_parse_chunk)(C.calloc(1, C.size_t(unsafe.Sizeof(C.di_parse_chunk{}))))
	defer C.free(unsafe.Pointer(c))
	c.struct_size = C.uint32_t(unsafe.Sizeof(C.di_parse_chunk{}))
	c.text, c.text_len = ct, nt
	c.token_ids, c.num_token_ids = ids, nids
	c.finish_reason = C.int32_t(out.FinishReason)
	c.prompt_tokens = C.int64_t(out.PromptTokens)
	c.cached_prompt_tokens = C.int64_t(out.CachedPromptTokens)
	c.completion_tokens = C.int64_t(out.CompletionTokens)
	c.error_message, c.error_message_len = ce, ne
	return p.run(func(ptr *C.di_parser, h C.uintptr_t, cerr **C.di_error) C.di_status {
		return C.parse_push_go(ptr, c, h, cerr)
	}, onEvent)
}

// PushChunk feeds one engine chunk as it came from Request.Next.
func (p *Parser) PushChunk(ch *Chunk, onEvent func(Event)) error {
	c := ch.toC()
	defer freeCChunk(c)
	return p.run(func(ptr *C.di_parser, h C.uintptr_t, cerr **C.di_error) C.di_status {
		return C.parse_push_chunk_go(ptr, c, h, cerr)
	}, onEvent)
}

// Finish ends the output (as a normal stop) and passes the remaining events to onEvent.
func (p *Parser) Finish(onEvent func(Event)) error {
	return p.run(func(ptr *C.di_parser, h C.uintptr_t, cerr **C.di_error) C.di_status {
		return C.parse_finish_go(ptr, h, cerr)
	}, onEvent)
}

// Response is the non-streaming response body as JSON (after the output ended).
func (p *Parser) Response() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ptr == nil {
		return "", ErrClosed
	}
	var s *C.char
	var n C.size_t
	var cerr *C.di_error
	if err := toError(C.di_parse_response(p.ptr, &s, &n, &cerr), cerr); err != nil {
		return "", err
	}
	return takeString(s, n), nil
}
