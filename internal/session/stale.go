package session

import (
	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// checkFresh applies the staleness rule (ocpi.StaleError) to a write of a
// session: next is the session as the write would store it, cur the locked
// row (nil when new).
//
// A session that ended (COMPLETED or INVALID) does not go back to a status
// that is not final by an update stamped with the same last_updated: a CPO
// that sends ACTIVE and COMPLETED within one second (whole-second
// timestamps) means the session ended, whatever order they arrive in. A
// later last_updated is the CPO's word and is applied, even one that leaves
// a final status (the spec does not forbid it, and the CPO owns the
// session); one final status may replace the other at the same instant.
func checkFresh(r Ref, cur *stored, next *ocpi.Session) error {
	if cur == nil {
		return nil
	}
	object := "session " + r.String()
	stored := ocpi.LastUpdatedOf(cur.body)
	if err := ocpi.CheckFresh(Module, object, stored, next.LastUpdated); err != nil {
		return err
	}
	// The body, not doc: a PATCH merges into doc before this check. Read
	// where it lies: a stored body is canonical (its keys as the Session
	// spells them, each once).
	was := gjson.GetBytes(cur.body, "status").String()
	if ocpi.SameInstant(stored, next.LastUpdated) && ocpi.IsFinalSessionStatus(was) && !ocpi.IsFinalSessionStatus(next.Status) {
		return &ocpi.StaleError{Module: Module, Object: object, Stored: stored, Sent: next.LastUpdated,
			Reason: "the session is " + was + " at last_updated " + stored.String() + " and an update with the same last_updated cannot make it " + next.Status}
	}
	return nil
}
