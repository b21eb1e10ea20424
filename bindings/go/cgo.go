// Package deepinfer is a thin Go binding of libdeepinfer's C ABI (capi/include/deepinfer.h):
// Engine and Request (pull-style streaming with Next(ctx) / Chunk() / Err() and a channel
// adapter), Recipe and Prepared (API requests to prompts), Parser (model output to API events),
// Tokenizer and Options. Errors are *Error values carrying the library's status and message.
//
// Import it as deepinfer.dev/go. Its cgo flags come from pkg-config (deepinfer.pc): an installed
// prefix with
//
//	PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig CGO_LDFLAGS="-Wl,-rpath,$PREFIX/lib" go build
//
// or a CMake build tree with PKG_CONFIG_PATH=$BUILD/pkgconfig (its deepinfer.pc points at
// $BUILD/lib and the source tree's header). Every object has an idempotent Close; a finalizer
// frees what was not closed, as a safety net only. No call needs runtime.LockOSThread; each
// goroutine blocked in Request.Next holds an OS thread for at most one 50 ms poll slice.
package deepinfer

/*
#cgo pkg-config: deepinfer
#include <stdlib.h>
#include "deepinfer.h"
*/
import "C"

import (
	"unsafe"
)

// cBytes returns a C copy of s (freed by the caller with C.free) and its length; NULL for "".
func cBytes(s string) (*C.char, C.size_t) {
	if len(s) == 0 {
		return nil, 0
	}
	return (*C.char)(C.CBytes([]byte(s))), C.size_t(len(s))
}

// takeString copies a library-allocated buffer into Go memory and releases it with di_free.
func takeString(p *C.char, n C.size_t) string {
	if p == nil {
		return ""
	}
	s := C.GoStringN(p, C.int(n))
	C.di_free(unsafe.Pointer(p))
	return s
}

// ABIVersion is the ABI version of the loaded library (major*10000 + minor*100 + patch).
func ABIVersion() uint32 { return uint32(C.di_abi_version()) }

// HeaderABIVersion is the ABI version this binding was compiled against.
const HeaderABIVersion = C.DI_ABI_VERSION

// VersionString is the library's version, e.g. "1.0.0 (cuda sm_90a)".
func VersionString() string { return C.GoString(C.di_version_string()) }

// BuildInfo is a JSON object describing what this build can do.
func BuildInfo() string { return C.GoString(C.di_build_info()) }

// OptionsSchema is a JSON array describing every option key: key, type, scope, doc.
func OptionsSchema() string { return C.GoString(C.di_options_schema()) }

// CheckABI reports an error when the loaded library cannot serve this binding: another major
// version, or an older minor than the header it was compiled against.
func CheckABI() error {
	lib, hdr := ABIVersion(), uint32(HeaderABIVersion)
	if lib/10000 != hdr/10000 || lib < hdr {
		return &Error{Status: StatusUnsupported,
			Message: "libdeepinfer ABI " + itoa(int64(lib)) + " does not serve this binding (built for " +
				itoa(int64(hdr)) + ")"}
	}
	return nil
}
