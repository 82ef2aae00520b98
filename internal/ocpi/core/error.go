// Package core is the OCPI core every module is built on: the response envelope, status codes, the one
// error type every layer of ocpihub returns, the primitive types (DateTime, CiString, string(n), number,
// DisplayText, Price), paging, field checks, the staleness rule, PATCH merge and typed decoding. Package ocpi
// holds the modules' types and names all of this under its own name too.
//
// Input is read leniently and written strictly: timestamps are accepted with or
// without a zone designator and with fractions, numbers as JSON numbers or
// decimal strings; on output timestamps always end in Z and numbers are JSON
// numbers.
package core

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes. They are the machine-readable `error.code` of the envelope and
// decide the HTTP status and the OCPI status_code of a response, in one place:
// Mapping.
const (
	EINVALIDJSON       = "INVALID_JSON"           // body is not JSON
	EUNAUTHORIZED      = "UNAUTHORIZED"           // missing or unknown token
	ENOTFOUND          = "NOT_FOUND"              // unknown object, or another party's
	EUNKNOWNLOCATION   = "UNKNOWN_LOCATION"       // OCPI 2003
	EUNKNOWNTOKEN      = "UNKNOWN_TOKEN"          // OCPI 2004
	EINVALID           = "INVALID_REQUEST"        // valid JSON that breaks the spec
	ENOTENOUGHINFO     = "NOT_ENOUGH_INFORMATION" // OCPI 2002
	ECONFLICT          = "CONFLICT"               // duplicate of something that must be unique
	EUNPROCESSABLE     = "UNPROCESSABLE"          // same idempotency key, different body
	EMETHOD            = "METHOD_NOT_ALLOWED"     // e.g. credentials POST when registered
	ETOOLARGE          = "PAYLOAD_TOO_LARGE"      // body over the size cap
	ERATELIMIT         = "RATE_LIMITED"           // too many requests
	ECLIENTAPI         = "CLIENT_API_ERROR"       // OCPI 3001: we could not use the partner's API
	EUNSUPPORTEDVER    = "UNSUPPORTED_VERSION"    // OCPI 3002
	ENOENDPOINTS       = "NO_MATCHING_ENDPOINTS"  // OCPI 3003
	EHUB               = "HUB_ERROR"              // OCPI 4000
	EUNKNOWNRECEIVER   = "UNKNOWN_RECEIVER"       // OCPI 4001
	ETIMEOUT           = "TIMEOUT"                // OCPI 4002
	ENOTCONNECTED      = "NOT_CONNECTED"          // OCPI 4003
	EINTERNAL          = "INTERNAL"               // a bug: HTTP 500, OCPI 3000
	EUNAVAILABLE       = "UNAVAILABLE"            // shutting down, database down: HTTP 503, OCPI 3000
	EUNSUPPORTEDMEDIUM = "UNSUPPORTED_MEDIA_TYPE" // body without application/json
)

// Mapping is the HTTP status and OCPI status_code of an error code. It is the
// only place where errors meet HTTP: DESIGN §6.
var mapping = map[string]struct{ HTTP, Status int }{
	EINVALIDJSON:       {http.StatusBadRequest, StatusInvalidParams},
	EUNAUTHORIZED:      {http.StatusUnauthorized, StatusClientError},
	ENOTFOUND:          {http.StatusNotFound, StatusClientError},
	EUNKNOWNLOCATION:   {http.StatusNotFound, StatusUnknownLocation},
	EUNKNOWNTOKEN:      {http.StatusNotFound, StatusUnknownToken},
	EINVALID:           {http.StatusOK, StatusInvalidParams},
	ENOTENOUGHINFO:     {http.StatusOK, StatusNotEnoughInfo},
	ECONFLICT:          {http.StatusConflict, StatusInvalidParams},
	EUNPROCESSABLE:     {http.StatusUnprocessableEntity, StatusInvalidParams},
	EMETHOD:            {http.StatusMethodNotAllowed, StatusClientError},
	ETOOLARGE:          {http.StatusRequestEntityTooLarge, StatusClientError},
	ERATELIMIT:         {http.StatusTooManyRequests, StatusClientError},
	ECLIENTAPI:         {http.StatusOK, StatusClientAPIError},
	EUNSUPPORTEDVER:    {http.StatusOK, StatusUnsupportedVersion},
	ENOENDPOINTS:       {http.StatusOK, StatusNoMatchingEndpoints},
	EHUB:               {http.StatusOK, StatusHubError},
	EUNKNOWNRECEIVER:   {http.StatusOK, StatusUnknownReceiver},
	ETIMEOUT:           {http.StatusOK, StatusTimeout},
	ENOTCONNECTED:      {http.StatusOK, StatusNotConnected},
	EINTERNAL:          {http.StatusInternalServerError, StatusServerError},
	EUNAVAILABLE:       {http.StatusServiceUnavailable, StatusServerError},
	EUNSUPPORTEDMEDIUM: {http.StatusUnsupportedMediaType, StatusInvalidParams},
	ESTALE:             {http.StatusOK, StatusSuccess},
}

// Error is the error type of ocpihub. Code decides how it is answered; Message
// is safe to show to the caller; Field and Issue name the offending input (the
// envelope's error.details); Err is the cause, logged and never shown.
//
// HTTPStatus and StatusCode override the mapping of Code when a module's spec
// says something more specific (e.g. a 2003 inside an HTTP 200).
type Error struct {
	Code    string
	Message string
	Field   string
	Issue   string
	Err     error

	HTTPStatus int
	StatusCode int
}

// Error implements the error interface.
func (e *Error) Error() string {
	msg := e.Code + ": " + e.Message
	if e.Field != "" {
		msg += " (" + e.Field + ": " + e.Issue + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error naming the field (as a JSON path) and what
// is wrong with it.
func Invalid(field, issue string) *Error {
	return &Error{Code: EINVALID, Message: "invalid " + field + ": " + issue, Field: field, Issue: issue}
}

// ErrNotFound is the sentinel for "no such object"; domain packages wrap it or
// return it as is, and it answers as HTTP 404.
var ErrNotFound = &Error{Code: ENOTFOUND, Message: "not found"}

// IsNotFound reports whether err means "not found".
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == ENOTFOUND
}

// ErrorCode returns the code of err: its own when it is an *Error, EINTERNAL
// otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// HTTPStatusOf returns the HTTP status and OCPI status_code for err.
func HTTPStatusOf(err error) (httpStatus, statusCode int) {
	var e *Error
	if !errors.As(err, &e) {
		return http.StatusInternalServerError, StatusServerError
	}
	m, ok := mapping[e.Code]
	if !ok {
		m = mapping[EINTERNAL]
	}
	httpStatus, statusCode = m.HTTP, m.Status
	if e.HTTPStatus != 0 {
		httpStatus = e.HTTPStatus
	}
	if e.StatusCode != 0 {
		statusCode = e.StatusCode
	}
	return httpStatus, statusCode
}
