package schematest

import (
	"strings"
	"testing"
)

// TestCheckRequest211 holds the bodies a 2.1.1 partner receives to the
// 2.1.1 schemas, required fields included (which the vendored wrappers
// cannot enforce under draft-07).
func TestCheckRequest211(t *testing.T) {
	t.Parallel()
	token := `{"uid":"T1","type":"RFID","auth_id":"C-T1","issuer":"x","valid":true,"whitelist":"ALLOWED","last_updated":"2026-01-01T00:00:00Z"}`
	for _, tc := range []struct {
		module, method, level, body, want string
	}{
		{"tokens", "PUT", "", token, ""},
		{"tokens", "PUT", "", strings.Replace(token, `"auth_id":"C-T1",`, "", 1), "auth_id"},
		{"tokens", "PATCH", "", `{"valid":false}`, ""},
		{"tokens", "PUT", "", strings.Replace(token, `"2026-01-01T00:00:00Z"`, `"2026-01-01T00:00:00.5Z"`, 1), "last_updated"},
		{"commands", "POST", "START_SESSION", `{"response_url":"https://hub.example/r","token":` + token + `,"location_id":"L1"}`, ""},
		{"commands", "POST", "START_SESSION", `{"response_url":"https://hub.example/r","location_id":"L1","connector_id":"1"}`, "token"},
		{"commands", "POST", "result", `{"result":"ACCEPTED"}`, ""},
		{"commands", "POST", "result", `{"result":"EVSE_OCCUPIED"}`, "result"},
		{"sessions", "PUT", "", `{"id":"S1"}`, "missing properties"},
		{"credentials", "POST", "", `{"token":"t","url":"https://x.example/v","business_details":{"name":"X"},"party_id":"ABC","country_code":"NL"}`, ""},
		{"modules", "GET", "", `{}`, ""},
	} {
		err := CheckRequest211(tc.module, tc.method, tc.level, []byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s %s: %v", tc.module, tc.method, tc.level, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s %s: %v, want an error about %s", tc.module, tc.method, tc.level, err, tc.want)
		}
	}
}
