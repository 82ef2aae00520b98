package location_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// recorder is an event.Emitter that keeps events and can fail.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
	fail   error
}

func (r *recorder) Emit(ctx context.Context, tx *store.Tx, e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	if tx == nil {
		return errors.New("emitted outside a transaction")
	}
	r.events = append(r.events, e)
	return nil
}

// TestLocationUpdatedEvent: every stored change emits location.updated
// (public, concerning the owner CPO) inside its transaction: an unchanged
// PUT emits nothing, and a failing emitter rolls the change back.
func TestLocationUpdatedEvent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		rec := &recorder{}
		s := location.New(db, nil, rec, clock.Real{}, nil)
		raw, _ := json.Marshal(locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE"))
		ref := location.Ref{CountryCode: "NL", PartyID: "CP1", LocationID: "LOC1"}
		if res, err := s.Put(ctx, location.Change{}, ref, raw); err != nil || !res.Created {
			t.Fatalf("put: %+v %v", res, err)
		}
		if res, err := s.Put(ctx, location.Change{}, ref, raw); err != nil || res.Changed {
			t.Fatalf("unchanged put: %+v %v", res, err)
		}
		patch := []byte(`{"status":"CHARGING","last_updated":"` + hubtest.Stamp(1) + `"}`)
		evse := ref
		evse.EVSEUID = "E1"
		if _, err := s.Patch(ctx, location.Change{}, evse, patch); err != nil {
			t.Fatal(err)
		}
		if len(rec.events) != 2 {
			t.Fatalf("%d events, want 2 (the unchanged PUT emits none)", len(rec.events))
		}
		e := rec.events[1]
		data := e.Data.(map[string]any)
		if e.Name != event.LocationUpdated || !e.Public || len(e.Parties) != 1 || e.Parties[0].PartyID != "CP1" ||
			data["evse_uid"] != "E1" || data["status"] != "CHARGING" || data["location_id"] != "LOC1" {
			t.Errorf("event %+v", e)
		}

		rec.fail = errors.New("webhook store down")
		patch = []byte(`{"status":"BLOCKED","last_updated":"` + hubtest.Stamp(2) + `"}`)
		if _, err := s.Patch(ctx, location.Change{}, evse, patch); err == nil {
			t.Fatal("a change whose event failed was accepted")
		}
		body, err := s.Get(ctx, evse)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		_ = json.Unmarshal(body, &got)
		if got["status"] != "CHARGING" {
			t.Errorf("the change was stored without its event: %v", got["status"])
		}
	})
}
