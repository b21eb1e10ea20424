// The C -> Go log callback of SetLogHandler. Kept alone: a file with //export may only declare
// in its preamble.
package deepinfer

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import "unsafe"

//export goLogRecord
func goLogRecord(_ unsafe.Pointer, level C.int32_t, message *C.char, n C.size_t) {
	logMu.RLock()
	fn := logHandler
	logMu.RUnlock()
	if fn != nil {
		fn(LogLevel(level), C.GoStringN(message, C.int(n)))
	}
}
