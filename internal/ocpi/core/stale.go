package core

import (
	"encoding/json"
	"errors"
	"time"
)

// ESTALE is the code of an update older than the stored object: it is
// answered HTTP 200 with status_code 1000 and a status_message saying it was
// ignored (see StaleError).
const ESTALE = "STALE"

// StaleError is the one staleness rule of ocpihub, for every object a
// partner pushes (locations, EVSEs, connectors, tariffs, tokens, sessions,
// CDRs, payment terminals; OCPI 2.2.1, 2.1.1 and 2.0 alike): an update whose
// last_updated is before the stored object's changes nothing, is neither
// forwarded nor emitted, and is answered as a success whose status_message
// says it was ignored.
//
// Why a success: the spec has no status code for "older than what I have"
// (transport.md §7), and an error would make a sender retry, or resync with a
// GET and PUT the same old object again. The sender's own data is newer than
// the update it sent (it already sent a later one), so nothing is lost by
// acknowledging it; upi.md §3 settles the payment webhooks the same way ("a
// repeated or older event changes nothing and is acknowledged").
//
// Equal timestamps are not stale: the update is applied. Many partners stamp
// last_updated in whole seconds (OCPI 2.1.1 examples do), so two real
// changes in the same second carry the same value, and refusing the second
// would lose it; an exact replay of the stored state changes nothing anyway
// and is not forwarded. A module may add a rule for equal timestamps (a
// session that ended does not go back to ACTIVE at the same instant).
//
// The check runs inside the write transaction, on the row the transaction
// locked, so two writes of one object are compared in the order they commit.
// A domain write returns the StaleError as its error (its transaction rolls
// back); the HTTP layer answers it, logs it and counts it in
// ocpihub_stale_updates_total{module}.
type StaleError struct {
	// Module is the OCPI module of the object (locations, tariffs, tokens,
	// sessions, cdrs, payments): the metric's label.
	Module string
	// Object names what was updated, for the message and the log.
	Object string
	// Stored and Sent are the stored object's last_updated and the
	// update's.
	Stored, Sent DateTime
	// Reason replaces the comparison of the timestamps in the message when a
	// module's own rule made the update stale.
	Reason string
}

// Error implements the error interface.
func (e *StaleError) Error() string { return ESTALE + ": " + e.message() }

// Unwrap gives the Error the response is built from (ESTALE: HTTP 200, 1000).
func (e *StaleError) Unwrap() error { return &Error{Code: ESTALE, Message: e.message()} }

func (e *StaleError) message() string {
	reason := e.Reason
	if reason == "" {
		reason = "its last_updated " + e.Sent.String() + " is older than the stored " + e.Stored.String()
	}
	return "update ignored as stale: " + reason + "; " + e.Object + " is unchanged and nothing was forwarded"
}

// CheckFresh applies the staleness rule: a *StaleError when sent is before
// stored, nil otherwise (equal, later, or either unknown: a stored object
// without last_updated never makes an update stale).
func CheckFresh(module, object string, stored, sent DateTime) error {
	if stored.IsZero() || sent.IsZero() || !sent.Before(stored.Time) {
		return nil
	}
	return &StaleError{Module: module, Object: object, Stored: stored, Sent: sent}
}

// CheckFreshText is CheckFresh for last_updated values as stored documents
// keep them (strings); one that does not parse counts as unknown.
func CheckFreshText(module, object, stored, sent string) error {
	s, _ := ParseDateTime(stored)
	n, _ := ParseDateTime(sent)
	return CheckFresh(module, object, s, n)
}

// SameInstant reports whether two DateTimes are the same instant (equal
// timestamps, for a module's own rule; see StaleError).
func SameInstant(a, b DateTime) bool {
	return !a.IsZero() && a.Time.Truncate(time.Millisecond).Equal(b.Time.Truncate(time.Millisecond))
}

// AsStale returns the StaleError in err's chain, or nil.
func AsStale(err error) *StaleError {
	var s *StaleError
	if errors.As(err, &s) {
		return s
	}
	return nil
}

// LastUpdatedOf reads the last_updated of a stored document (zero when it
// has none that parses).
func LastUpdatedOf(body []byte) DateTime {
	var head struct {
		LastUpdated string `json:"last_updated"`
	}
	if json.Unmarshal(body, &head) != nil {
		return DateTime{}
	}
	d, _ := ParseDateTime(head.LastUpdated)
	return d
}
