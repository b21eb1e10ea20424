// Tokenizer: di_tokenizer (tokenizer.json byte-level BPE). Immutable in C, so calls run
// concurrently; Close waits for them.
package deepinfer

/*
#include <stdlib.h>
#include "deepinfer.h"
*/
import "C"

import (
	"unsafe"
)

// Tokenizer encodes and decodes text with a model's tokenizer.json.
type Tokenizer struct {
	handle[C.di_tokenizer]
}

// Segment is one piece of a prompt for EncodeSegments: template text (control tokens
// recognised) or content (always plain text).
type Segment struct {
	Text     string
	Template bool
}

// Range is a half-open range [Begin, End) of token positions.
type Range struct{ Begin, End uint32 }

// SpecialIDs are tokenizer_config.json's BOS and EOS ids (-1 when not configured) and whether
// encoding with addSpecial prepends the BOS.
type SpecialIDs struct {
	BOS, EOS    int32
	AddBOSToken bool
}

// NewTokenizer loads a model directory's tokenizer.json (or the file itself).
func NewTokenizer(path string) (*Tokenizer, error) {
	p, err := createFromString(path, func(cp *C.char, n C.size_t, out **C.di_tokenizer, cerr **C.di_error) C.di_status {
		return C.di_tokenizer_create(cp, n, out, cerr)
	})
	if err != nil {
		return nil, err
	}
	return withFinalizer(&Tokenizer{handle[C.di_tokenizer]{ptr: p}}), nil
}

// Close releases the tokenizer once running calls return. Idempotent.
func (t *Tokenizer) Close() {
	t.close(func(p *C.di_tokenizer) { C.di_tokenizer_destroy(p) })
}

// Encode returns the ids of text. addedTokens recognises added/special tokens written in the
// text (never for user content); addSpecial adds the BOS/EOS of the post-processor.
func (t *Tokenizer) Encode(text string, addedTokens, addSpecial bool) ([]int32, error) {
	var flags C.uint32_t
	if addedTokens {
		flags |= C.DI_TOKENIZE_ADDED_TOKENS
	}
	if addSpecial {
		flags |= C.DI_TOKENIZE_ADD_SPECIAL
	}
	ct, n := cBytes(text)
	defer C.free(unsafe.Pointer(ct))
	var ids *C.int32_t
	var num C.size_t
	if err := t.call(func(p *C.di_tokenizer, cerr **C.di_error) C.di_status {
		return C.di_tokenizer_encode(p, ct, n, flags, &ids, &num, cerr)
	}); err != nil {
		return nil, err
	}
	return takeIDs(ids, num), nil
}

// EncodeSegments encodes each segment on its own and reports which ids came from template
// segments (the only ids that may be control tokens). No BOS/EOS is added.
func (t *Tokenizer) EncodeSegments(segs []Segment) ([]int32, []Range, error) {
	n := len(segs)
	// The pointer array lives in C memory: cgo forbids passing Go memory that holds pointers.
	texts := (*[1 << 28]*C.char)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))[: n+1 : n+1]
	lens := (*[1 << 28]C.size_t)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.size_t(0)))))[: n+1 : n+1]
	special := (*[1 << 28]C.uint8_t)(C.calloc(C.size_t(n+1), 1))[: n+1 : n+1]
	defer func() {
		for i := 0; i < n; i++ {
			C.free(unsafe.Pointer(texts[i]))
		}
		C.free(unsafe.Pointer(&texts[0]))
		C.free(unsafe.Pointer(&lens[0]))
		C.free(unsafe.Pointer(&special[0]))
	}()
	for i, s := range segs {
		texts[i], lens[i] = cBytes(s.Text)
		if s.Template {
			special[i] = 1
		}
	}
	var ids *C.int32_t
	var num C.size_t
	var ranges *C.uint32_t
	var nr C.size_t
	if err := t.call(func(p *C.di_tokenizer, cerr **C.di_error) C.di_status {
		return C.di_tokenizer_encode_segments(p, &texts[0], &lens[0], &special[0], C.size_t(n),
			&ids, &num, &ranges, &nr, cerr)
	}); err != nil {
		return nil, nil, err
	}
	out := takeIDs(ids, num)
	rs := toRanges(ranges, nr)
	C.di_free(unsafe.Pointer(ranges))
	return out, rs, nil
}

// Decode turns ids into text (bytes that are not valid UTF-8 become U+FFFD).
func (t *Tokenizer) Decode(ids []int32, skipSpecial bool) (string, error) {
	var flags C.uint32_t
	if skipSpecial {
		flags = C.DI_DECODE_SKIP_SPECIAL
	}
	cids, n := cIDs(ids)
	defer C.free(unsafe.Pointer(cids))
	return t.text(func(p *C.di_tokenizer, s **C.char, sl *C.size_t, cerr **C.di_error) C.di_status {
		return C.di_tokenizer_decode(p, cids, n, flags, s, sl, cerr)
	})
}

// TokenToPiece returns the raw bytes of one token (possibly part of a UTF-8 character).
func (t *Tokenizer) TokenToPiece(id int32) ([]byte, error) {
	var s *C.char
	var n C.size_t
	if err := t.call(func(p *C.di_tokenizer, cerr **C.di_error) C.di_status {
		return C.di_tokenizer_token_to_piece(p, C.int32_t(id), &s, &n, cerr)
	}); err != nil {
		return nil, err
	}
	b := C.GoBytes(unsafe.Pointer(s), C.int(n))
	C.di_free(unsafe.Pointer(s))
	return b, nil
}

// TokenID looks a token up by its tokenizer.json spelling; errors.Is(err, ErrNotFound) when absent.
func (t *Tokenizer) TokenID(token string) (int32, error) {
	ct, n := cBytes(token)
	defer C.free(unsafe.Pointer(ct))
	var id C.int32_t
	if err := t.call(func(p *C.di_tokenizer, cerr **C.di_error) C.di_status {
		return C.di_tokenizer_token_id(p, ct, n, &id, cerr)
	}); err != nil {
		return 0, err
	}
	return int32(id), nil
}

// VocabSize is the number of ids (largest id + 1).
func (t *Tokenizer) VocabSize() (int64, error) {
	var v int64
	err := t.use(func(p *C.di_tokenizer) error {
		v = int64(C.di_tokenizer_vocab_size(p))
		return nil
	})
	return v, err
}

// SpecialIDs reports the BOS / EOS configuration.
func (t *Tokenizer) SpecialIDs() (SpecialIDs, error) {
	var bos, eos, add C.int32_t
	if err := t.call(func(p *C.di_tokenizer, cerr **C.di_error) C.di_status {
		return C.di_tokenizer_special_ids(p, &bos, &eos, &add, cerr)
	}); err != nil {
		return SpecialIDs{}, err
	}
	return SpecialIDs{BOS: int32(bos), EOS: int32(eos), AddBOSToken: add != 0}, nil
}

// cIDs copies ids into C memory (freed by the caller); NULL for none.
func cIDs(ids []int32) (*C.int32_t, C.size_t) {
	if len(ids) == 0 {
		return nil, 0
	}
	p := (*C.int32_t)(C.malloc(C.size_t(len(ids)) * 4))
	copy(unsafe.Slice((*int32)(unsafe.Pointer(p)), len(ids)), ids)
	return p, C.size_t(len(ids))
}

// toRanges copies n [begin, end) pairs of flat out of library memory.
func toRanges(flat *C.uint32_t, n C.size_t) []Range {
	out := make([]Range, int(n))
	if n > 0 {
		pairs := unsafe.Slice((*uint32)(unsafe.Pointer(flat)), int(2*n))
		for i := range out {
			out[i] = Range{pairs[2*i], pairs[2*i+1]}
		}
	}
	return out
}

// takeIDs copies a library-allocated id array into Go memory and releases it with di_free.
func takeIDs(p *C.int32_t, n C.size_t) []int32 {
	out := make([]int32, int(n))
	if n > 0 {
		copy(out, unsafe.Slice((*int32)(unsafe.Pointer(p)), int(n)))
	}
	C.di_free(unsafe.Pointer(p))
	return out
}
