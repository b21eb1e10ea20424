// Engine and Request: di_engine / di_request. Requests are pulled with short poll slices so a
// context ends a wait promptly and no Go code ever runs on an engine thread. A request's handle
// is destroyed only when no other goroutine is inside a call on it.
package deepinfer

/*
#include <stdlib.h>
#include "deepinfer.h"
*/
import "C"

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"
)

// pollSliceMs bounds how long one cgo call waits, i.e. how late a cancelled context is seen.
const pollSliceMs = 50

// Engine is one loaded model with its scheduler and KV cache. Safe for concurrent use.
type Engine struct {
	handle[C.di_engine] // read: submit, metrics; write: Close

	modelDir string
	tokOnce  sync.Once // the model's tokenizer, loaded by the first SubmitText
	tok      *Tokenizer
	tokErr   error
}

// NewEngine loads modelDir (config.json, *.safetensors, tokenizer.json) with engine options
// (may be nil) and starts the engine's threads.
func NewEngine(modelDir string, options *Options) (*Engine, error) {
	p, err := createWithOptions(modelDir, options,
		func(cd *C.char, n C.size_t, o *C.di_options, out **C.di_engine, cerr **C.di_error) C.di_status {
			return C.di_engine_create(cd, n, o, out, cerr)
		})
	if err != nil {
		return nil, err
	}
	return withFinalizer(&Engine{handle: handle[C.di_engine]{ptr: p}, modelDir: modelDir}), nil
}

// Close cancels unfinished requests (they end with FinishCancelled) and stops the engine.
// Idempotent; requests stay valid until their own Close.
func (e *Engine) Close() {
	// After this Do no SubmitText can load a tokenizer any more (a load in flight finishes first).
	e.tokOnce.Do(func() {})
	if e.tok != nil {
		e.tok.Close()
	}
	e.close(func(p *C.di_engine) { C.di_engine_destroy(p) })
}

// Submit queues a prompt of token ids with sampling options (may be nil) and returns at once.
func (e *Engine) Submit(ids []int32, sampling *Options) (*Request, error) {
	cids, n := cIDs(ids)
	defer C.free(unsafe.Pointer(cids))
	o, err := sampling.lock()
	if err != nil {
		return nil, err
	}
	defer sampling.unlock()
	return e.submit(func(ep *C.di_engine, r **C.di_request, cerr **C.di_error) C.di_status {
		return C.di_submit(ep, cids, n, o, nil, nil, r, cerr)
	})
}

// SubmitText queues a text prompt encoded as the Python and Java bindings encode one: control
// tokens written in the text are recognised and the tokenizer's BOS is added as
// tokenizer_config.json says (the same ids as `deepinfer tokenize --add-special`). The model
// directory's tokenizer is loaded by the first call.
func (e *Engine) SubmitText(text string, sampling *Options) (*Request, error) {
	e.tokOnce.Do(func() { e.tok, e.tokErr = NewTokenizer(e.modelDir) })
	if e.tokErr != nil {
		return nil, e.tokErr
	}
	if e.tok == nil {
		return nil, ErrClosed // Close ran before any SubmitText
	}
	ids, err := e.tok.Encode(text, true, true)
	if err != nil {
		return nil, err
	}
	return e.Submit(ids, sampling)
}

// SubmitPrepared queues a recipe-prepared request with its own sampling options. Feed its chunks
// to a parser from p.ParserOptionsJSON(), which applies the stop strings.
func (e *Engine) SubmitPrepared(p *Prepared) (req *Request, err error) {
	if perr := p.use(func(h *C.di_prepared) error {
		req, err = e.submit(func(ep *C.di_engine, r **C.di_request, cerr **C.di_error) C.di_status {
			return C.di_submit_prepared(ep, h, nil, nil, r, cerr)
		})
		return nil
	}); perr != nil {
		return nil, perr
	}
	return req, err
}

// Metrics returns the engine's metrics as JSON, or the Prometheus text exposition.
func (e *Engine) Metrics(prometheus bool) (string, error) {
	format := C.int32_t(0)
	if prometheus {
		format = 1
	}
	return e.text(func(p *C.di_engine, s **C.char, n *C.size_t, cerr **C.di_error) C.di_status {
		return C.di_engine_metrics(p, format, s, n, cerr)
	})
}

// Info describes the engine as JSON: model, limits, device.
func (e *Engine) Info() (string, error) {
	return e.text(func(p *C.di_engine, s **C.char, n *C.size_t, cerr **C.di_error) C.di_status {
		return C.di_engine_info(p, s, n, cerr)
	})
}

// submit runs one di_submit* call (both submits differ only in it) and wraps the new request.
func (e *Engine) submit(call func(*C.di_engine, **C.di_request, **C.di_error) C.di_status) (*Request, error) {
	var r *C.di_request
	if err := e.call(func(p *C.di_engine, cerr **C.di_error) C.di_status {
		return call(p, &r, cerr)
	}); err != nil {
		return nil, err
	}
	return newRequest(r), nil
}

// Chunk is a piece of one completion's output, copied out of the library.
type Chunk struct {
	Index              uint32
	RequestID          uint64
	TokenIDs           []int32
	Text               string // never ends inside a UTF-8 character
	Logprobs           []float32
	TopLogprobIDs      [][]int32 // per token, most likely first; nil unless requested
	TopLogprobs        [][]float32
	FinishReason       int32 // Finish*; FinishNone until the completion's last chunk
	IsFinal            bool  // the request's very last chunk
	PromptTokens       int64
	CachedPromptTokens int64
	CompletionTokens   int64
	ErrorMessage       string
}

// FinishName is "stop", "length", "stop_sequence", "cancelled", "error" or "".
func (c *Chunk) FinishName() string {
	switch c.FinishReason {
	case FinishStop:
		return "stop"
	case FinishLength:
		return "length"
	case FinishStopSequence:
		return "stop_sequence"
	case FinishCancelled:
		return "cancelled"
	case FinishError:
		return "error"
	}
	return ""
}

func copyChunk(c *C.di_chunk) Chunk {
	n := int(c.num_tokens)
	out := Chunk{
		Index:              uint32(c.index),
		RequestID:          uint64(c.request_id),
		TokenIDs:           make([]int32, n),
		Text:               C.GoStringN(c.text, C.int(c.text_len)),
		FinishReason:       int32(c.finish_reason),
		IsFinal:            c.is_final != 0,
		PromptTokens:       int64(c.prompt_tokens),
		CachedPromptTokens: int64(c.cached_prompt_tokens),
		CompletionTokens:   int64(c.completion_tokens),
	}
	if n > 0 {
		copy(out.TokenIDs, unsafe.Slice((*int32)(unsafe.Pointer(c.token_ids)), n))
	}
	if c.logprobs != nil && n > 0 {
		out.Logprobs = append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(c.logprobs)), n)...)
	}
	if k := int(c.num_top_logprobs); k > 0 && n > 0 && c.top_logprob_ids != nil {
		ids := unsafe.Slice((*int32)(unsafe.Pointer(c.top_logprob_ids)), n*k)
		lps := unsafe.Slice((*float32)(unsafe.Pointer(c.top_logprobs)), n*k)
		for i := 0; i < n; i++ {
			out.TopLogprobIDs = append(out.TopLogprobIDs, append([]int32(nil), ids[i*k:(i+1)*k]...))
			out.TopLogprobs = append(out.TopLogprobs, append([]float32(nil), lps[i*k:(i+1)*k]...))
		}
	}
	if c.error_message != nil {
		out.ErrorMessage = C.GoStringN(c.error_message, C.int(c.error_message_len))
	}
	return out
}

// toC builds a di_chunk in C memory for di_parse_push_chunk; release with freeCChunk.
func (ch *Chunk) toC() *C.di_chunk {
	c := (*C.di_chunk)(C.calloc(1, C.size_t(unsafe.Sizeof(C.di_chunk{}))))
	c.struct_size = C.uint32_t(unsafe.Sizeof(C.di_chunk{}))
	c.index = C.uint32_t(ch.Index)
	c.request_id = C.uint64_t(ch.RequestID)
	c.token_ids, c.num_tokens = cIDs(ch.TokenIDs)
	c.text = C.CString(ch.Text)
	c.text_len = C.size_t(len(ch.Text))
	c.finish_reason = C.int32_t(ch.FinishReason)
	if ch.IsFinal {
		c.is_final = 1
	}
	c.prompt_tokens = C.int64_t(ch.PromptTokens)
	c.cached_prompt_tokens = C.int64_t(ch.CachedPromptTokens)
	c.completion_tokens = C.int64_t(ch.CompletionTokens)
	c.error_message = C.CString(ch.ErrorMessage)
	c.error_message_len = C.size_t(len(ch.ErrorMessage))
	return c
}

func freeCChunk(c *C.di_chunk) {
	C.free(unsafe.Pointer(c.token_ids))
	C.free(unsafe.Pointer(c.text))
	C.free(unsafe.Pointer(c.error_message))
	C.free(unsafe.Pointer(c))
}

// Request is one submitted request. Read it like sql.Rows:
//
//	for req.Next(ctx) { c := req.Chunk(); ... }
//	if err := req.Err(); err != nil { ... }
//
// Cancel may be called from any goroutine while another one is in Next.
type Request struct {
	life    sync.RWMutex // read: calls inside the handle; write: destroy
	pollMu  sync.Mutex   // the C ABI allows one poller per request
	closing atomic.Bool
	ptr     *C.di_request
	id      uint64
	chunk   Chunk
	err     error
	done    bool
}

func newRequest(r *C.di_request) *Request {
	return withFinalizer(&Request{ptr: r, id: uint64(C.di_request_id(r))})
}

// ID is the engine-wide request id (as in Chunk.RequestID).
func (r *Request) ID() uint64 { return r.id }

// Next waits for the next chunk; false at the end of the stream, on an error, or when ctx ends
// (the request is then cancelled and Err returns ctx.Err()).
func (r *Request) Next(ctx context.Context) bool {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	if r.done {
		return false
	}
	for {
		if err := ctx.Err(); err != nil {
			r.Cancel()
			r.finish(err)
			return false
		}
		st, chunk, err := r.poll(pollSliceMs)
		switch {
		case err != nil:
			r.finish(err)
			return false
		case st == C.DI_OK:
			r.chunk = chunk
			return true
		case st == C.DI_END_OF_STREAM:
			r.finish(nil)
			return false
		}
	}
}

func (r *Request) finish(err error) {
	r.done = true
	r.err = err
	r.chunk = Chunk{}
}

func (r *Request) poll(timeoutMs int32) (C.di_status, Chunk, error) {
	if r.closing.Load() {
		return 0, Chunk{}, ErrClosed
	}
	r.life.RLock()
	defer r.life.RUnlock()
	if r.ptr == nil {
		return 0, Chunk{}, ErrClosed
	}
	c := (*C.di_chunk)(C.calloc(1, C.size_t(unsafe.Sizeof(C.di_chunk{}))))
	defer C.free(unsafe.Pointer(c))
	c.struct_size = C.uint32_t(unsafe.Sizeof(C.di_chunk{}))
	var cerr *C.di_error
	st := C.di_poll_chunk(r.ptr, C.int32_t(timeoutMs), c, &cerr)
	if err := toError(st, cerr); err != nil {
		return st, Chunk{}, err
	}
	if st == C.DI_OK {
		return st, copyChunk(c), nil
	}
	return st, Chunk{}, nil
}

// Chunk is the chunk the last successful Next produced.
func (r *Request) Chunk() Chunk { return r.chunk }

// Err is the error that ended iteration, nil at a normal end of stream.
func (r *Request) Err() error { return r.err }

// Chan streams the chunks on a channel that is closed at the end, on an error (see Err after the
// close) or when ctx ends; the pumping goroutine never outlives that.
func (r *Request) Chan(ctx context.Context) <-chan Chunk {
	ch := make(chan Chunk)
	go func() {
		defer close(ch)
		for r.Next(ctx) {
			select {
			case ch <- r.Chunk():
			case <-ctx.Done():
				r.Cancel()
				r.pollMu.Lock()
				r.finish(ctx.Err())
				r.pollMu.Unlock()
				return
			}
		}
	}()
	return ch
}

// Cancel ends the request early: its completions end with FinishCancelled. Idempotent; safe from
// any goroutine at any time.
func (r *Request) Cancel() {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.ptr != nil {
		C.di_cancel(r.ptr, nil)
	}
}

// Close cancels the request if unfinished, waits until no call is inside it and frees it.
// Idempotent.
func (r *Request) Close() {
	r.closing.Store(true)
	r.Cancel()
	r.life.Lock()
	defer r.life.Unlock()
	C.di_request_destroy(r.ptr)
	r.ptr = nil
}
