// Log records: di_log_set. The library's records (load phases, warnings, errors) go to one Go
// function, or to stderr. The C callback runs on the thread that logged (one calling NewEngine,
// or an engine's own threads), one record at a time, and reaches Go through an exported function
// reading a package variable: no Go pointer is held by C.
package deepinfer

/*
#include <stdint.h>
#include "deepinfer.h"

void goLogRecord(void* user, int32_t level, char* message, size_t len);

static di_status log_set_go(int32_t max_level, int to_go, di_error** err) {
  return di_log_set(to_go ? (di_log_fn)goLogRecord : NULL, NULL, max_level, err);
}
*/
import "C"

import "sync"

// LogLevel is a record's severity: LogError is the most severe, LogDebug the most verbose.
type LogLevel int32

const (
	LogError LogLevel = C.DI_LOG_ERROR
	LogWarn  LogLevel = C.DI_LOG_WARN
	LogInfo  LogLevel = C.DI_LOG_INFO
	LogDebug LogLevel = C.DI_LOG_DEBUG
)

func (l LogLevel) String() string {
	switch l {
	case LogError:
		return "error"
	case LogWarn:
		return "warn"
	case LogInfo:
		return "info"
	case LogDebug:
		return "debug"
	}
	return itoa(int64(l))
}

var (
	logMu      sync.RWMutex
	logHandler func(LogLevel, string)
)

// SetLogHandler sends the library's records of maxLevel and more severe to fn, or to stderr
// when fn is nil; it replaces any earlier handler. fn must not call SetLogHandler and should
// return quickly. A level outside LogError..LogDebug is an *Error (DI_E_INVALID_ARG) and leaves
// the handler as it was.
func SetLogHandler(fn func(level LogLevel, message string), maxLevel LogLevel) error {
	if fn != nil {
		// The new function is in place before the library can call it.
		logMu.Lock()
		prev := logHandler
		logHandler = fn
		logMu.Unlock()
		var cerr *C.di_error
		if err := toError(C.log_set_go(C.int32_t(maxLevel), 1, &cerr), cerr); err != nil {
			logMu.Lock()
			logHandler = prev
			logMu.Unlock()
			return err
		}
		return nil
	}
	var cerr *C.di_error
	if err := toError(C.log_set_go(C.int32_t(maxLevel), 0, &cerr), cerr); err != nil {
		return err
	}
	logMu.Lock()
	logHandler = nil
	logMu.Unlock()
	return nil
}
