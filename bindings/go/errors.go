// Errors: the library's di_status as a Go value (Status, usable with errors.Is) and *Error
// carrying the status, the message that names the field at fault, and the JSON detail.
package deepinfer

/*
#include "deepinfer.h"
*/
import "C"

import (
	"encoding/json"
	"strconv"
)

// Status is a di_status. Negative values are errors and implement error, so
// errors.Is(err, deepinfer.ErrNotFound) matches any *Error with that status.
type Status int32

const (
	StatusOK             Status = C.DI_OK
	StatusTimeout        Status = C.DI_TIMEOUT
	StatusEndOfStream    Status = C.DI_END_OF_STREAM
	StatusAgain          Status = C.DI_AGAIN            // reserved: no 1.x call returns it
	StatusBufferTooSmall Status = C.DI_BUFFER_TOO_SMALL // reserved: no 1.x call returns it
	StatusInvalidArg     Status = C.DI_E_INVALID_ARG
	StatusOOM            Status = C.DI_E_OOM
	StatusUnsupported    Status = C.DI_E_UNSUPPORTED
	StatusNotFound       Status = C.DI_E_NOT_FOUND
	StatusIO             Status = C.DI_E_IO
	StatusParse          Status = C.DI_E_PARSE
	StatusCancelled      Status = C.DI_E_CANCELLED
	StatusInternal       Status = C.DI_E_INTERNAL
	StatusLimit          Status = C.DI_E_LIMIT
	StatusState          Status = C.DI_E_STATE
	StatusDevice         Status = C.DI_E_DEVICE
	StatusPermission     Status = C.DI_E_PERMISSION
)

// Sentinels for errors.Is.
var (
	ErrInvalidArg  error = StatusInvalidArg
	ErrOOM         error = StatusOOM
	ErrUnsupported error = StatusUnsupported
	ErrNotFound    error = StatusNotFound
	ErrIO          error = StatusIO
	ErrParse       error = StatusParse
	ErrCancelled   error = StatusCancelled
	ErrInternal    error = StatusInternal
	ErrLimit       error = StatusLimit
	ErrState       error = StatusState
	ErrDevice      error = StatusDevice
	ErrPermission  error = StatusPermission
	// ErrClosed is returned by calls on a closed object (its status is StatusState).
	ErrClosed error = &Error{Status: StatusState, Message: "the object is closed"}
)

// String is the library's name for the status ("DI_E_NOT_FOUND").
func (s Status) String() string { return C.GoString(C.di_status_name(C.di_status(s))) }

// Error makes an error status usable as an error value.
func (s Status) Error() string { return s.String() }

// Error is a failure reported by libdeepinfer.
type Error struct {
	Status  Status
	Message string
	// Detail is the error's JSON detail, "" when none. For a request the recipe rejected it is
	// {"status": <HTTP status>, "body": <the API's error body>}.
	Detail string
}

func (e *Error) Error() string { return e.Status.String() + ": " + e.Message }

// Unwrap exposes the status for errors.Is(err, deepinfer.ErrNotFound).
func (e *Error) Unwrap() error { return e.Status }

// HTTPStatus is the HTTP status of a request the recipe rejected, or 0.
func (e *Error) HTTPStatus() int { return detailField[int](e.Detail, "status") }

// Body is the API's error body of a request the recipe rejected (raw JSON), or nil.
func (e *Error) Body() json.RawMessage { return detailField[json.RawMessage](e.Detail, "body") }

// detailField is the detail's member key decoded as T; T's zero value when the detail is empty
// or not a JSON object, or the member is missing or not a T.
func detailField[T any](detail, key string) T {
	var zero T
	var members map[string]json.RawMessage
	if detail == "" || json.Unmarshal([]byte(detail), &members) != nil {
		return zero
	}
	raw, ok := members[key]
	if !ok {
		return zero
	}
	var v T
	if json.Unmarshal(raw, &v) != nil {
		return zero
	}
	return v
}

// toError converts a status and its di_error (released here) into a Go error; nil for
// non-negative statuses.
func toError(st C.di_status, cerr *C.di_error) error {
	defer C.di_error_destroy(cerr)
	if st >= 0 {
		return nil
	}
	e := &Error{Status: Status(st)}
	if cerr != nil {
		e.Status = Status(C.di_error_code(cerr))
		e.Message = C.GoString(C.di_error_message(cerr))
		e.Detail = C.GoString(C.di_error_detail(cerr))
	}
	if e.Message == "" {
		e.Message = e.Status.String()
	}
	return e
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
