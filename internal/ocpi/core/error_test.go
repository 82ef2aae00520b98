package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testNow = time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)

// TestErrorResponseDesignTable pins every row of DESIGN §6 (and every other
// error code) to its HTTP status, OCPI status_code and error object.
func TestErrorResponseDesignTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantHTTP   int
		wantStatus int
		wantError  ErrorDetail
	}{
		// DESIGN §6, row by row.
		{"body is not JSON", &Error{Code: EINVALIDJSON, Message: "the body is not valid JSON"},
			400, 2001, ErrorDetail{Code: "INVALID_JSON", Description: "the body is not valid JSON"}},
		{"missing or unknown token", &Error{Code: EUNAUTHORIZED, Message: "unknown token"},
			401, 2000, ErrorDetail{Code: "UNAUTHORIZED", Description: "unknown token"}},
		{"unknown object", ErrNotFound,
			404, 2000, ErrorDetail{Code: "NOT_FOUND", Description: "not found"}},
		{"unknown object, wrapped", fmt.Errorf("location NL/ABC/1: %w", ErrNotFound),
			404, 2000, ErrorDetail{Code: "NOT_FOUND", Description: "not found"}},
		{"unknown location", &Error{Code: EUNKNOWNLOCATION, Message: "unknown location 12"},
			404, 2003, ErrorDetail{Code: "UNKNOWN_LOCATION", Description: "unknown location 12"}},
		{"unknown token", &Error{Code: EUNKNOWNTOKEN, Message: "unknown token 012345678"},
			404, 2004, ErrorDetail{Code: "UNKNOWN_TOKEN", Description: "unknown token 012345678"}},
		{"valid JSON that breaks the spec", Invalid("evses[2].connectors[0].max_voltage", "is required"),
			200, 2001, ErrorDetail{Code: "INVALID_REQUEST", Description: "invalid evses[2].connectors[0].max_voltage: is required",
				Details: &ErrorDetails{Field: "evses[2].connectors[0].max_voltage", Issue: "is required"}}},
		{"credentials POST when registered", &Error{Code: EMETHOD, Message: "already registered"},
			405, 2000, ErrorDetail{Code: "METHOD_NOT_ALLOWED", Description: "already registered"}},
		{"body over the size cap", &Error{Code: ETOOLARGE, Message: "the body is larger than 1048576 bytes"},
			413, 2000, ErrorDetail{Code: "PAYLOAD_TOO_LARGE", Description: "the body is larger than 1048576 bytes"}},
		{"rate limit", &Error{Code: ERATELIMIT, Message: "slow down"},
			429, 2000, ErrorDetail{Code: "RATE_LIMITED", Description: "slow down"}},
		{"partner not connected", &Error{Code: ENOTCONNECTED, Message: "NL-CPO is offline"},
			200, 4003, ErrorDetail{Code: "NOT_CONNECTED", Description: "NL-CPO is offline"}},
		{"partner timed out", &Error{Code: ETIMEOUT, Message: "no answer in 30s"},
			200, 4002, ErrorDetail{Code: "TIMEOUT", Description: "no answer in 30s"}},
		{"partner API unusable", &Error{Code: ECLIENTAPI, Message: "versions unreachable"},
			200, 3001, ErrorDetail{Code: "CLIENT_API_ERROR", Description: "versions unreachable"}},
		{"bug: a plain error", errors.New("pq: relation \"secret_table\" does not exist"),
			500, 3000, ErrorDetail{Code: "INTERNAL", Description: "internal error; the request id identifies it in our logs"}},
		{"bug: EINTERNAL hides its message", &Error{Code: EINTERNAL, Message: "nil map in handler", Err: errors.New("boom")},
			500, 3000, ErrorDetail{Code: "INTERNAL", Description: "internal error; the request id identifies it in our logs"}},

		// The other codes of the mapping.
		{"not enough information", &Error{Code: ENOTENOUGHINFO, Message: "location references needed"},
			200, 2002, ErrorDetail{Code: "NOT_ENOUGH_INFORMATION", Description: "location references needed"}},
		{"conflict", &Error{Code: ECONFLICT, Message: "role NL/ABC CPO is taken"},
			409, 2001, ErrorDetail{Code: "CONFLICT", Description: "role NL/ABC CPO is taken"}},
		{"idempotency key reused", &Error{Code: EUNPROCESSABLE, Message: "same key, other body"},
			422, 2001, ErrorDetail{Code: "UNPROCESSABLE", Description: "same key, other body"}},
		{"unsupported version", &Error{Code: EUNSUPPORTEDVER, Message: "no 2.2.1"},
			200, 3002, ErrorDetail{Code: "UNSUPPORTED_VERSION", Description: "no 2.2.1"}},
		{"no matching endpoints", &Error{Code: ENOENDPOINTS, Message: "no locations receiver"},
			200, 3003, ErrorDetail{Code: "NO_MATCHING_ENDPOINTS", Description: "no locations receiver"}},
		{"hub error", &Error{Code: EHUB, Message: "routing failed"},
			200, 4000, ErrorDetail{Code: "HUB_ERROR", Description: "routing failed"}},
		{"unknown receiver", &Error{Code: EUNKNOWNRECEIVER, Message: "no party XX/YYY"},
			200, 4001, ErrorDetail{Code: "UNKNOWN_RECEIVER", Description: "no party XX/YYY"}},
		{"unavailable", &Error{Code: EUNAVAILABLE, Message: "shutting down"},
			503, 3000, ErrorDetail{Code: "UNAVAILABLE", Description: "shutting down"}},
		{"wrong media type", &Error{Code: EUNSUPPORTEDMEDIUM, Message: "want application/json"},
			415, 2001, ErrorDetail{Code: "UNSUPPORTED_MEDIA_TYPE", Description: "want application/json"}},

		// Module-specific overrides and defaults.
		{"2003 inside HTTP 200 (commands)", &Error{Code: EUNKNOWNLOCATION, Message: "unknown location", HTTPStatus: 200},
			200, 2003, ErrorDetail{Code: "UNKNOWN_LOCATION", Description: "unknown location"}},
		{"charging preferences: 404 + 2001", &Error{Code: EINVALID, Message: "EVSE not capable", HTTPStatus: 404},
			404, 2001, ErrorDetail{Code: "INVALID_REQUEST", Description: "EVSE not capable"}},
		{"status code override", &Error{Code: EINVALID, Message: "custom", StatusCode: 2900},
			200, 2900, ErrorDetail{Code: "INVALID_REQUEST", Description: "custom"}},
		{"empty message falls back to the status text", &Error{Code: ENOTFOUND},
			404, 2000, ErrorDetail{Code: "NOT_FOUND", Description: "Generic client error"}},
		{"unknown code answers as a bug", &Error{Code: "NO_SUCH_CODE", Message: "oops"},
			500, 3000, ErrorDetail{Code: "NO_SUCH_CODE", Description: "oops"}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.wantError.Code] = true
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gotHTTP, resp := ErrorResponse(tt.err, testNow)
			if gotHTTP != tt.wantHTTP {
				t.Errorf("HTTP status = %d, want %d", gotHTTP, tt.wantHTTP)
			}
			want := Response{StatusCode: tt.wantStatus, StatusMessage: tt.wantError.Description, Error: &tt.wantError, Timestamp: NewDateTime(testNow)}
			if diff := cmp.Diff(want, resp); diff != "" {
				t.Errorf("envelope (-want +got):\n%s", diff)
			}
			if h, s := HTTPStatusOf(tt.err); h != tt.wantHTTP || s != tt.wantStatus {
				t.Errorf("HTTPStatusOf = %d, %d; want %d, %d", h, s, tt.wantHTTP, tt.wantStatus)
			}
		})
	}
	covered[ESTALE] = true // answered as a success: TestStaleResponse
	for code := range mapping {
		if !covered[code] {
			t.Errorf("error code %s has no row in this table", code)
		}
	}
}

// TestEnvelopeJSON checks the bytes partners see: success with and without
// data, and an error with details.
func TestEnvelopeJSON(t *testing.T) {
	t.Parallel()
	// Version is the shape of an entry of the versions list.
	type Version struct {
		Version string `json:"version"`
		URL     string `json:"url"`
	}
	tests := []struct {
		name string
		resp Response
		want string
	}{
		{"success with a list", Success([]Version{{Version: "2.2.1", URL: "https://hub.example/ocpi/2.2.1"}}, testNow),
			`{"data":[{"version":"2.2.1","url":"https://hub.example/ocpi/2.2.1"}],"status_code":1000,"status_message":"Success","timestamp":"2025-03-04T05:06:07.89Z"}`},
		{"success without data omits it", Success(nil, testNow),
			`{"status_code":1000,"status_message":"Success","timestamp":"2025-03-04T05:06:07.89Z"}`},
		{"success with an empty list keeps it", Success([]Version{}, testNow),
			`{"data":[],"status_code":1000,"status_message":"Success","timestamp":"2025-03-04T05:06:07.89Z"}`},
		{"error with details", func() Response {
			_, r := ErrorResponse(Invalid("roles[0].party_id", "must be three letters or digits"), testNow)
			return r
		}(),
			`{"status_code":2001,"status_message":"invalid roles[0].party_id: must be three letters or digits","error":{"code":"INVALID_REQUEST","description":"invalid roles[0].party_id: must be three letters or digits","details":{"field":"roles[0].party_id","issue":"must be three letters or digits"}},"timestamp":"2025-03-04T05:06:07.89Z"}`},
		{"error without details", func() Response { _, r := ErrorResponse(ErrNotFound, testNow); return r }(),
			`{"status_code":2000,"status_message":"not found","error":{"code":"NOT_FOUND","description":"not found"},"timestamp":"2025-03-04T05:06:07.89Z"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			env, err := DecodeEnvelope(b)
			if err != nil {
				t.Fatalf("our own envelope does not decode: %v", err)
			}
			if env.StatusCode != tt.resp.StatusCode || !env.Timestamp.Equal(tt.resp.Timestamp.Time) {
				t.Errorf("decoded %+v from %s", env, b)
			}
		})
	}
}

// TestErrorHelpers covers the small functions around Error.
func TestErrorHelpers(t *testing.T) {
	t.Parallel()
	wrapped := fmt.Errorf("find: %w", ErrNotFound)
	if !IsNotFound(wrapped) || IsNotFound(errors.New("x")) || IsNotFound(Invalid("a", "b")) {
		t.Error("IsNotFound")
	}
	if got := ErrorCode(wrapped); got != ENOTFOUND {
		t.Errorf("ErrorCode(wrapped not found) = %s", got)
	}
	if got := ErrorCode(errors.New("x")); got != EINTERNAL {
		t.Errorf("ErrorCode(plain) = %s", got)
	}
	cause := errors.New("disk full")
	e := &Error{Code: EINTERNAL, Message: "store failed", Field: "body", Issue: "x", Err: cause}
	if !errors.Is(e, cause) {
		t.Error("Error does not unwrap to its cause")
	}
	if diff := cmp.Diff("INTERNAL: store failed (body: x): disk full", e.Error()); diff != "" {
		t.Error(diff)
	}
	if got := Errorf(ECONFLICT, "party %s/%s", "NL", "ABC"); got.Code != ECONFLICT || got.Message != "party NL/ABC" {
		t.Errorf("Errorf = %+v", got)
	}
	if h, s := HTTPStatusOf(nil); h != http.StatusInternalServerError || s != StatusServerError {
		// nil is not an *Error; callers never pass it, but it must not panic.
		t.Errorf("HTTPStatusOf(nil) = %d, %d", h, s)
	}
}

// TestStatusText gives every standard code its own text and classes to the
// custom ranges.
func TestStatusText(t *testing.T) {
	t.Parallel()
	seen := map[string]int{}
	for _, code := range []int{1000, 2000, 2001, 2002, 2003, 2004, 3000, 3001, 3002, 3003, 4000, 4001, 4002, 4003} {
		txt := StatusText(code)
		if prev, dup := seen[txt]; dup {
			t.Errorf("codes %d and %d share the text %q", prev, code, txt)
		}
		seen[txt] = code
	}
	for code, want := range map[int]string{1900: "Success", 2950: "Client error", 3999: "Server error", 4900: "Hub error", 5000: "Unknown status", 999: "Unknown status"} {
		if got := StatusText(code); got != want {
			t.Errorf("StatusText(%d) = %q, want %q", code, got, want)
		}
	}
	for code, want := range map[int]bool{999: false, 1000: true, 1999: true, 2000: false} {
		if IsSuccess(code) != want {
			t.Errorf("IsSuccess(%d) != %v", code, want)
		}
	}
}
