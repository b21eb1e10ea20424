// Options: di_options, typed keyed settings for engines, recipes and sampling. Not safe for
// concurrent modification (as in C); the library copies what it reads.
package deepinfer

/*
#include <stdlib.h>
#include "deepinfer.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"unsafe"
)

// Options holds typed keyed settings; see OptionsSchema for the keys.
type Options struct {
	mu  sync.Mutex
	ptr *C.di_options
}

// NewOptions makes an empty options object.
func NewOptions() (*Options, error) {
	var p *C.di_options
	var cerr *C.di_error
	if err := toError(C.di_options_create(&p, &cerr), cerr); err != nil {
		return nil, err
	}
	return newOptions(p), nil
}

func newOptions(p *C.di_options) *Options {
	return withFinalizer(&Options{ptr: p})
}

// OptionsFromMap makes an options object from {key: value}: integers go to int64 keys, other
// numbers to double keys, strings to string keys, anything to JSON keys. nil or empty gives nil.
func OptionsFromMap(settings map[string]any) (*Options, error) {
	if len(settings) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return nil, &Error{Status: StatusInvalidArg, Message: "options: " + err.Error()}
	}
	o, err := NewOptions()
	if err != nil {
		return nil, err
	}
	if err := o.UpdateJSON(string(b)); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// Close releases the options. Idempotent.
func (o *Options) Close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	C.di_options_destroy(o.ptr)
	o.ptr = nil
}

// lock returns the C pointer with o locked; the caller unlocks. A nil *Options is "no options".
func (o *Options) lock() (*C.di_options, error) {
	if o == nil {
		return nil, nil
	}
	o.mu.Lock()
	if o.ptr == nil {
		o.mu.Unlock()
		return nil, ErrClosed
	}
	return o.ptr, nil
}

func (o *Options) unlock() {
	if o != nil {
		o.mu.Unlock()
	}
}

// call runs one C call on the object with o locked, reporting failure through a di_error. A nil
// *Options here is ErrClosed: only constructors read nil as "no options".
func (o *Options) call(f func(p *C.di_options, cerr **C.di_error) C.di_status) error {
	if o == nil {
		return ErrClosed
	}
	p, err := o.lock()
	if err != nil {
		return err
	}
	defer o.unlock()
	var cerr *C.di_error
	err = toError(f(p, &cerr), cerr)
	runtime.KeepAlive(o)
	return err
}

// with is call for the per-key functions: the key is copied to C memory for the call.
func (o *Options) with(f func(p *C.di_options, key *C.char, cerr **C.di_error) C.di_status, key string) error {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	return o.call(func(p *C.di_options, cerr **C.di_error) C.di_status { return f(p, ckey, cerr) })
}

// Clone makes a deep copy.
func (o *Options) Clone() (*Options, error) {
	var out *C.di_options
	if err := o.call(func(p *C.di_options, cerr **C.di_error) C.di_status {
		return C.di_options_clone(p, &out, cerr)
	}); err != nil {
		return nil, err
	}
	return newOptions(out), nil
}

// SetInt sets an int64 key.
func (o *Options) SetInt(key string, v int64) error {
	return o.with(func(p *C.di_options, k *C.char, e **C.di_error) C.di_status {
		return C.di_options_set_i64(p, k, C.int64_t(v), e)
	}, key)
}

// SetFloat sets a double key.
func (o *Options) SetFloat(key string, v float64) error {
	return o.with(func(p *C.di_options, k *C.char, e **C.di_error) C.di_status {
		return C.di_options_set_f64(p, k, C.double(v), e)
	}, key)
}

// SetString sets a string key.
func (o *Options) SetString(key, v string) error {
	return o.setText(key, v, func(p *C.di_options, k, s *C.char, n C.size_t, e **C.di_error) C.di_status {
		return C.di_options_set_str(p, k, s, n, e)
	})
}

// SetJSON sets a JSON key to the document in js.
func (o *Options) SetJSON(key, js string) error {
	return o.setText(key, js, func(p *C.di_options, k, s *C.char, n C.size_t, e **C.di_error) C.di_status {
		return C.di_options_set_json(p, k, s, n, e)
	})
}

// setText sets a string or JSON key through set, with v copied to C memory for the call.
func (o *Options) setText(key, v string,
	set func(*C.di_options, *C.char, *C.char, C.size_t, **C.di_error) C.di_status) error {
	cv, n := cBytes(v)
	defer C.free(unsafe.Pointer(cv))
	return o.with(func(p *C.di_options, k *C.char, e **C.di_error) C.di_status {
		return set(p, k, cv, n, e)
	}, key)
}

// UpdateJSON sets several keys from a JSON object, all or nothing.
func (o *Options) UpdateJSON(js string) error {
	cv, n := cBytes(js)
	defer C.free(unsafe.Pointer(cv))
	return o.call(func(p *C.di_options, cerr **C.di_error) C.di_status {
		return C.di_options_update_json(p, cv, n, cerr)
	})
}

// Int reads an int64 key; ok is false when the key is known but unset.
func (o *Options) Int(key string) (v int64, ok bool, err error) {
	return getNumber[C.int64_t, int64](o, key, func(p *C.di_options, k *C.char, v *C.int64_t, e **C.di_error) C.di_status {
		return C.di_options_get_i64(p, k, v, e)
	})
}

// Float reads a double key; ok is false when the key is known but unset.
func (o *Options) Float(key string) (v float64, ok bool, err error) {
	return getNumber[C.double, float64](o, key, func(p *C.di_options, k *C.char, v *C.double, e **C.di_error) C.di_status {
		return C.di_options_get_f64(p, k, v, e)
	})
}

// cNumber is what the numeric keys hold in C.
type cNumber interface{ C.int64_t | C.double }

// getNumber reads an int64 or double key through get, as the Go type T.
func getNumber[CT cNumber, T int64 | float64](o *Options, key string,
	get func(*C.di_options, *C.char, *CT, **C.di_error) C.di_status) (T, bool, error) {
	var cv CT
	err := o.with(func(p *C.di_options, k *C.char, e **C.di_error) C.di_status {
		return get(p, k, &cv, e)
	}, key)
	return unset(T(cv), err)
}

// String reads a string key; ok is false when the key is known but unset.
func (o *Options) String(key string) (v string, ok bool, err error) {
	return o.getText(key, func(p *C.di_options, k *C.char, s **C.char, n *C.size_t, e **C.di_error) C.di_status {
		return C.di_options_get_str(p, k, s, n, e)
	})
}

// JSON reads a JSON key as compact JSON; ok is false when the key is known but unset.
func (o *Options) JSON(key string) (v string, ok bool, err error) {
	return o.getText(key, func(p *C.di_options, k *C.char, s **C.char, n *C.size_t, e **C.di_error) C.di_status {
		return C.di_options_get_json(p, k, s, n, e)
	})
}

// getText reads a string or JSON key through get; the text is copied before the lock drops.
func (o *Options) getText(key string,
	get func(*C.di_options, *C.char, **C.char, *C.size_t, **C.di_error) C.di_status) (v string, ok bool, err error) {
	err = o.with(func(p *C.di_options, k *C.char, e **C.di_error) C.di_status {
		var s *C.char
		var n C.size_t
		st := get(p, k, &s, &n, e)
		if st == C.DI_OK {
			v = C.GoStringN(s, C.int(n))
		}
		return st
	}, key)
	return unset(v, err)
}

// ToJSON serializes every set key as one JSON object.
func (o *Options) ToJSON() (string, error) {
	var s *C.char
	var n C.size_t
	if err := o.call(func(p *C.di_options, cerr **C.di_error) C.di_status {
		return C.di_options_to_json(p, &s, &n, cerr)
	}); err != nil {
		return "", err
	}
	return takeString(s, n), nil
}

func unset[T any](v T, err error) (T, bool, error) {
	var zero T
	if e, ok := err.(*Error); ok && e.Status == StatusNotFound {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, err
	}
	return v, true, nil
}
