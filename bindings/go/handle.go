// handle: one library object shared by goroutines. Calls hold it read-locked and Close
// write-locked, so the object is never destroyed under a call; a call after Close returns
// ErrClosed. Tokenizer, Recipe, Prepared, Parser and Engine embed one.
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

type handle[T any] struct {
	mu  sync.RWMutex
	ptr *T
}

// withFinalizer gives a new Go owner of library objects a finalizer that closes it: the safety
// net for an object its user never closed (Close is idempotent, so an explicit Close and the
// finalizer never free twice). Returns o.
func withFinalizer[O interface{ Close() }](o O) O {
	runtime.SetFinalizer(o, func(o O) { o.Close() })
	return o
}

// close destroys the object once running calls return. Idempotent (destroy takes NULL).
func (h *handle[T]) close(destroy func(*T)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	destroy(h.ptr)
	h.ptr = nil
}

// use runs f on the object, held against a concurrent close.
func (h *handle[T]) use(f func(*T) error) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.ptr == nil {
		return ErrClosed
	}
	return f(h.ptr)
}

// call runs one C call that reports failure through a di_error.
func (h *handle[T]) call(f func(*T, **C.di_error) C.di_status) error {
	return h.use(func(p *T) error {
		var cerr *C.di_error
		return toError(f(p, &cerr), cerr)
	})
}

// text runs a call that returns a library-allocated string and copies it out.
func (h *handle[T]) text(f func(*T, **C.char, *C.size_t, **C.di_error) C.di_status) (string, error) {
	var s *C.char
	var n C.size_t
	err := h.call(func(p *T, cerr **C.di_error) C.di_status { return f(p, &s, &n, cerr) })
	if err != nil {
		return "", err
	}
	return takeString(s, n), nil
}

// create runs a constructor that reports failure through a di_error and returns the object.
func create[T any](f func(**T, **C.di_error) C.di_status) (*T, error) {
	var p *T
	var cerr *C.di_error
	if err := toError(f(&p, &cerr), cerr); err != nil {
		return nil, err
	}
	return p, nil
}

// createFromString runs a constructor whose input is one string, copied to C memory that lives
// through the call.
func createFromString[T any](s string, f func(*C.char, C.size_t, **T, **C.di_error) C.di_status) (*T, error) {
	cs, n := cBytes(s)
	defer C.free(unsafe.Pointer(cs))
	return create(func(out **T, cerr **C.di_error) C.di_status { return f(cs, n, out, cerr) })
}

// createWithOptions is createFromString for constructors that also read options (may be nil),
// held locked through the call so a concurrent Close cannot free them.
func createWithOptions[T any](s string, options *Options,
	f func(*C.char, C.size_t, *C.di_options, **T, **C.di_error) C.di_status) (*T, error) {
	o, err := options.lock()
	if err != nil {
		return nil, err
	}
	defer options.unlock()
	return createFromString(s, func(cs *C.char, n C.size_t, out **T, cerr **C.di_error) C.di_status {
		return f(cs, n, o, out, cerr)
	})
}
