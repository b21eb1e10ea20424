// The C -> Go event callback of Parser. Kept alone: a file with //export may only declare in
// its preamble.
package deepinfer

/*
#include <stddef.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

//export goParseEvent
func goParseEvent(user unsafe.Pointer, event *C.char, eventLen C.size_t, data *C.char, dataLen C.size_t) {
	sink := cgo.Handle(uintptr(user)).Value().(*eventSink)
	sink.events = append(sink.events, Event{
		Name: C.GoStringN(event, C.int(eventLen)),
		Data: C.GoStringN(data, C.int(dataLen)),
	})
}
