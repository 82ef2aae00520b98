package core

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCheckFresh pins the staleness rule: older is stale, equal and later
// are applied, an unknown side never makes an update stale.
func TestCheckFresh(t *testing.T) {
	t.Parallel()
	at := func(s int) DateTime { return NewDateTime(time.Date(2026, 3, 1, 10, 0, s, 0, time.UTC)) }
	tests := []struct {
		name         string
		stored, sent DateTime
		stale        bool
	}{
		{"older", at(5), at(4), true},
		{"older by a millisecond", at(5), NewDateTime(at(5).Add(-time.Millisecond)), true},
		{"equal", at(5), at(5), false},
		{"later", at(5), at(6), false},
		{"nothing stored", DateTime{}, at(1), false},
		{"sent without last_updated", at(5), DateTime{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckFresh("tokens", "token NL/EM1/T1 (RFID)", tt.stored, tt.sent)
			if got := err != nil; got != tt.stale {
				t.Fatalf("CheckFresh(%s, %s) = %v, want stale %v", tt.stored, tt.sent, err, tt.stale)
			}
			if err != nil && (AsStale(err) == nil || AsStale(err).Module != "tokens") {
				t.Errorf("error %v is not a StaleError of module tokens", err)
			}
		})
	}
	if err := CheckFreshText("tariffs", "tariff X", "2026-03-01T10:00:05Z", "2026-03-01T10:00:04.999Z"); err == nil {
		t.Error("CheckFreshText: an older text timestamp is not stale")
	}
	if err := CheckFreshText("tariffs", "tariff X", "not a time", "2026-03-01T10:00:04Z"); err != nil {
		t.Errorf("CheckFreshText: an unparsable stored value made an update stale: %v", err)
	}
}

// TestStaleResponse: a stale update, wrapped or not, is answered HTTP 200
// with status_code 1000 and a status_message that says it was ignored and
// why, without an error object (the sender must not retry it).
func TestStaleResponse(t *testing.T) {
	t.Parallel()
	stored := NewDateTime(time.Date(2026, 3, 1, 10, 0, 5, 0, time.UTC))
	sent := NewDateTime(time.Date(2026, 3, 1, 10, 0, 4, 0, time.UTC))
	err := fmt.Errorf("writing: %w", CheckFresh("locations", "evse NL/CP1/LOC1/E1", stored, sent))
	status, resp := ErrorResponse(err, testNow)
	if status != http.StatusOK || resp.StatusCode != StatusSuccess || resp.Error != nil {
		t.Fatalf("got HTTP %d status_code %d error %+v, want 200, 1000, no error object", status, resp.StatusCode, resp.Error)
	}
	for _, want := range []string{"ignored as stale", "2026-03-01T10:00:04Z", "2026-03-01T10:00:05Z", "evse NL/CP1/LOC1/E1"} {
		if !strings.Contains(resp.StatusMessage, want) {
			t.Errorf("status_message %q lacks %q", resp.StatusMessage, want)
		}
	}
	if ErrorCode(err) != ESTALE {
		t.Errorf("ErrorCode = %s, want %s", ErrorCode(err), ESTALE)
	}
}
