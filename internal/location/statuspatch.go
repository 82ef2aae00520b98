package location

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// statusPatch is an EVSE PATCH of its status alone (with last_updated):
// the stream every CPO sends. It is applied to the stored document's bytes
// (one scan to find the EVSE, the changed values set in place) instead of
// decoding, merging, validating and re-encoding the whole location: the
// rest of the document was valid when stored and does not change. Any
// other PATCH, or a status the fast path cannot take as it is, goes the
// general way (Patch).
type statusPatch struct {
	status string
	lu     ocpi.DateTime
}

// asStatusPatch returns the patch as a status patch of an EVSE, or false.
// REMOVED is left to the general path: it changes the location's count of
// active EVSEs.
func asStatusPatch(r Ref, patch ocpi.Object) (statusPatch, bool) {
	if r.Level() != "evse" || len(patch) != 2 {
		return statusPatch{}, false
	}
	status, _ := patch["status"].(string)
	lu, _ := patch["last_updated"].(string)
	if status == "REMOVED" || !slices.Contains(ocpi.EVSEStatuses, status) {
		return statusPatch{}, false
	}
	dt, err := ocpi.ParseDateTime(lu)
	if err != nil {
		return statusPatch{}, false
	}
	return statusPatch{status: status, lu: dt}, true
}

// applyStatus applies p to the locked location (its stored body) in tx. It
// returns false, having written nothing, when the stored document is not
// one the fast path can change in place; the caller then runs the general
// path in the same transaction.
func (s *Service) applyStatus(ctx context.Context, tx *store.Tx, ch Change, r Ref, pk int64, body []byte, p statusPatch, res *Result) (bool, error) {
	doc := gjson.ParseBytes(body)
	evses := doc.Get("evses")
	if !evses.IsArray() {
		return false, nil
	}
	idx := -1
	var evse gjson.Result
	i := 0
	evses.ForEach(func(_, v gjson.Result) bool {
		if uid := v.Get("uid"); uid.Type == gjson.String && ocpi.EqualCI(uid.Str, r.EVSEUID) {
			idx, evse = i, v
			return false
		}
		i++
		return true
	})
	if idx < 0 {
		return false, nil // unknown EVSE: the general path answers it
	}
	oldStatus, evseLU, docLU := evse.Get("status"), evse.Get("last_updated"), doc.Get("last_updated")
	if oldStatus.Type != gjson.String || oldStatus.Str == "REMOVED" || evseLU.Type != gjson.String || docLU.Type != gjson.String {
		return false, nil
	}
	// The staleness rule against the newest last_updated of the EVSE and
	// its connectors (newestOf).
	newest, err := ocpi.ParseDateTime(evseLU.Str)
	if err != nil {
		return false, nil
	}
	for _, k := range evse.Get("connectors.#.last_updated").Array() {
		if d, err := ocpi.ParseDateTime(k.Str); err == nil && d.After(newest.Time) {
			newest = d
		}
	}
	if err := checkFresh(r, ocpi.Object{"last_updated": newest.String()}, p.lu); err != nil {
		return true, err
	}
	newEVSELU, evseRaised := raised(evseLU.Str, p.lu)
	newDocLU, docRaised := raised(docLU.Str, p.lu)
	if oldStatus.Str == p.status && !evseRaised && !docRaised {
		return true, nil // the stored document stays the same
	}
	res.Changed = true
	at := "evses." + strconv.Itoa(idx) + "."
	out := body
	for _, set := range []struct{ path, value string }{
		{at + "status", p.status}, {at + "last_updated", newEVSELU}, {"last_updated", newDocLU},
	} {
		if out, err = sjson.SetBytes(out, set.path, set.value); err != nil {
			return false, err
		}
	}
	docTime, err := ocpi.ParseDateTime(newDocLU)
	if err != nil {
		return false, err
	}
	evseTime, err := ocpi.ParseDateTime(newEVSELU)
	if err != nil {
		return false, err
	}
	if docRaised {
		// The location moves to its new place in the directory's order.
		was, err := ocpi.ParseDateTime(docLU.Str)
		if err != nil {
			return false, err
		}
		s.listed(tx, &stored{lu: was.Micros()}, pk, &ocpi.Location{LastUpdated: docTime})
	}
	// The row is locked and found: the two updates need no answer, and
	// travel with the change record and the webhook lookup (ExecLater).
	if err := tx.ExecLater(ctx, "UPDATE locations SET last_updated = $1, body = $2 WHERE pk = $3", docTime.Micros(), string(out), pk); err != nil {
		return false, err
	}
	uid := evse.Get("uid").Str
	if err := tx.ExecLater(ctx, "UPDATE evses SET status = $1, last_updated = $2 WHERE location_pk = $3 AND uid = $4",
		p.status, evseTime.Micros(), pk, ocpi.Key(uid)); err != nil {
		return false, err
	}
	// Push the patched fields, ids spelled as stored.
	r.LocationID, r.EVSEUID = doc.Get("id").Str, uid
	pushBody, err := ocpi.MarshalObject(ocpi.Object{"status": p.status, "last_updated": newEVSELU})
	if err != nil {
		return false, err
	}
	if s.hub != nil {
		push := hub.Push{Module: Module, ObjectKey: r.key(), Method: http.MethodPatch, Path: r.path(), Body: pushBody,
			CorrelationID: ch.CorrelationID}
		if err := s.hub.Broadcast(ctx, tx, ch.PlatformID, hub.CPOAudience, push); err != nil {
			return false, err
		}
	}
	return true, s.emitData(ctx, tx, r, doc.Get("country_code").Str, doc.Get("party_id").Str, docTime,
		p.status, evse.Get("evse_id").Str)
}

// raised returns the later of a stored last_updated and sent (as stored
// when it is not earlier), and whether sent is later: raiseLastUpdated on
// a string.
func raised(stored string, sent ocpi.DateTime) (string, bool) {
	if c, err := ocpi.ParseDateTime(stored); err == nil && !sent.After(c.Time) {
		return stored, false
	}
	return sent.String(), true
}
