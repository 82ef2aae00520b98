package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Response is the OCPI envelope of every response ocpihub sends, errors too.
// Data is omitted when nil (the 2.2.1-d2 erratum: omit data where the spec
// does not define it).
type Response struct {
	Data          any          `json:"data,omitempty"`
	StatusCode    int          `json:"status_code"`
	StatusMessage string       `json:"status_message,omitempty"`
	Error         *ErrorDetail `json:"error,omitempty"`
	Timestamp     DateTime     `json:"timestamp"`
}

// ErrorDetail is the envelope's error object: what failed, in a form a
// partner's code can act on.
type ErrorDetail struct {
	Code        string        `json:"code"`
	Description string        `json:"description"`
	Details     *ErrorDetails `json:"details,omitempty"`
}

// ErrorDetails names the offending field (a JSON path or a parameter name) and
// the issue with it.
type ErrorDetails struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Success returns a 1000 envelope around data.
func Success(data any, now time.Time) Response {
	return Response{Data: data, StatusCode: StatusSuccess, StatusMessage: StatusText(StatusSuccess), Timestamp: NewDateTime(now)}
}

// ErrorResponse returns the HTTP status and the envelope for err. Internal
// errors get a generic message; their cause is for the log only.
func ErrorResponse(err error, now time.Time) (int, Response) {
	httpStatus, code := HTTPStatusOf(err)
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Code: EINTERNAL, Message: "internal error"}
	}
	msg := e.Message
	if e.Code == EINTERNAL {
		msg = "internal error; the request id identifies it in our logs"
	}
	if msg == "" {
		msg = StatusText(code)
	}
	if e.Code == ESTALE {
		// Not an error for the sender: a success that says it was ignored.
		return httpStatus, Response{StatusCode: code, StatusMessage: msg, Timestamp: NewDateTime(now)}
	}
	detail := &ErrorDetail{Code: e.Code, Description: msg}
	if e.Field != "" {
		detail.Details = &ErrorDetails{Field: e.Field, Issue: e.Issue}
	}
	return httpStatus, Response{StatusCode: code, StatusMessage: msg, Error: detail, Timestamp: NewDateTime(now)}
}

// Envelope is a decoded OCPI response from a partner. Data is kept raw so the
// caller decodes it into the type it expects.
type Envelope struct {
	Data          json.RawMessage `json:"data,omitempty"`
	StatusCode    int             `json:"status_code"`
	StatusMessage string          `json:"status_message,omitempty"`
	Error         *ErrorDetail    `json:"error,omitempty"`
	Timestamp     DateTime        `json:"timestamp"`
}

// DecodeEnvelope parses an OCPI response body. It is lenient about what the
// spec leaves open (data absent, null or of any shape on errors; a
// status_code quoted as a string of digits, as some partners send it; a
// malformed timestamp) and strict about what it fixes: a JSON object with an
// integer status_code.
func DecodeEnvelope(body []byte) (*Envelope, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, errors.New("response is not an OCPI envelope: not a JSON object")
	}
	var raw struct {
		Data          json.RawMessage `json:"data"`
		StatusCode    *json.Number    `json:"status_code"`
		StatusMessage any             `json:"status_message"`
		Error         *ErrorDetail    `json:"error"`
		Timestamp     json.RawMessage `json:"timestamp"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("response is not an OCPI envelope: %w", err)
	}
	if raw.StatusCode == nil {
		return nil, errors.New("response is not an OCPI envelope: status_code missing")
	}
	code, err := raw.StatusCode.Int64()
	if err != nil || code < 0 || code > 9999 {
		return nil, fmt.Errorf("response is not an OCPI envelope: status_code %q is not a status code", raw.StatusCode.String())
	}
	env := &Envelope{StatusCode: int(code), Error: raw.Error}
	if s, ok := raw.StatusMessage.(string); ok {
		env.StatusMessage = s
	}
	if len(raw.Data) > 0 && !bytes.Equal(raw.Data, []byte("null")) {
		env.Data = raw.Data
	}
	if len(raw.Timestamp) > 0 {
		// A partner's malformed timestamp does not make its answer unusable.
		_ = json.Unmarshal(raw.Timestamp, &env.Timestamp)
	}
	return env, nil
}
