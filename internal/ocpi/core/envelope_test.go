package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeEnvelope is lenient where the spec leaves room and strict where
// it does not.
func TestDecodeEnvelope(t *testing.T) {
	t.Parallel()
	ts := NewDateTime(testNow)
	tests := []struct {
		name string
		in   string
		want *Envelope // nil: rejected
	}{
		{"success with data", `{"data":[{"version":"2.2.1"}],"status_code":1000,"status_message":"Success","timestamp":"2025-03-04T05:06:07.89Z"}`,
			&Envelope{Data: []byte(`[{"version":"2.2.1"}]`), StatusCode: 1000, StatusMessage: "Success", Timestamp: ts}},
		{"data absent", `{"status_code":1000,"timestamp":"2025-03-04T05:06:07.89Z"}`,
			&Envelope{StatusCode: 1000, Timestamp: ts}},
		{"data null", `{"data":null,"status_code":1000,"timestamp":"2025-03-04T05:06:07.89Z"}`,
			&Envelope{StatusCode: 1000, Timestamp: ts}},
		{"error with our error object", `{"status_code":2001,"status_message":"bad","error":{"code":"INVALID_REQUEST","description":"bad","details":{"field":"id","issue":"is required"}},"timestamp":"2025-03-04T05:06:07.890"}`,
			&Envelope{StatusCode: 2001, StatusMessage: "bad", Error: &ErrorDetail{Code: "INVALID_REQUEST", Description: "bad", Details: &ErrorDetails{Field: "id", Issue: "is required"}}, Timestamp: ts}},
		{"error with debugging data of any shape", `{"data":"stack trace","status_code":3000,"timestamp":"2025-03-04T05:06:07.89Z"}`,
			&Envelope{Data: []byte(`"stack trace"`), StatusCode: 3000, Timestamp: ts}},
		{"status_message null", `{"status_code":1000,"status_message":null}`, &Envelope{StatusCode: 1000}},
		{"status_message not a string", `{"status_code":1000,"status_message":5}`, &Envelope{StatusCode: 1000}},
		{"malformed timestamp is tolerated", `{"status_code":1000,"timestamp":"yesterday"}`, &Envelope{StatusCode: 1000}},
		{"timestamp without Z", `{"status_code":1000,"timestamp":"2025-03-04T05:06:07.89"}`, &Envelope{StatusCode: 1000, Timestamp: ts}},
		{"unknown fields", `{"status_code":1900,"extra":{"a":1}}`, &Envelope{StatusCode: 1900}},
		{"surrounding whitespace", " \n{\"status_code\":1000}\n", &Envelope{StatusCode: 1000}},
		{"integral float status", `{"status_code":1000.0}`, nil},

		{"empty", ``, nil},
		{"not JSON", `<html>502 Bad Gateway</html>`, nil},
		{"array", `[{"status_code":1000}]`, nil},
		{"string", `"ok"`, nil},
		{"no status_code", `{"data":[]}`, nil},
		{"status_code null", `{"status_code":null}`, nil},
		{"status_code quoted", `{"status_code":"1000"}`, &Envelope{StatusCode: 1000}},
		{"status_code quoted garbage", `{"status_code":"OK"}`, nil},
		{"status_code fraction", `{"status_code":1000.5}`, nil},
		{"status_code negative", `{"status_code":-1}`, nil},
		{"status_code too large", `{"status_code":100000}`, nil},
		{"truncated", `{"status_code":1000,"data":[`, nil},
		{"error not an object", `{"status_code":2000,"error":"bad"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeEnvelope([]byte(tt.in))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("DecodeEnvelope accepted %s: %+v", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeEnvelope(%s): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
