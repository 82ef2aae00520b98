package cdr

import (
	"context"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
)

// BrowseFilter selects CDRs for the operator's console.
type BrowseFilter struct {
	// Party keeps the CDRs of a party on either side: the CPO that issued
	// them or the eMSP that owns the token.
	Party ocpiclient.Party
	// From and To keep the CDRs whose last_updated (when the CPO issued
	// them: CDRs are immutable) is in [From, To); zero: unbounded. The
	// column is indexed, the CDR's start_date_time is not.
	From, To time.Time
	// PriceStatus keeps the CDRs of one price check outcome (PriceOK,
	// PriceMismatch, PriceUnpriceable); "" keeps all.
	PriceStatus   string
	Limit, Offset int
}

// Browse returns a page of every CDR the hub holds, most recently issued
// first, and how many the filter keeps.
func (s *Service) Browse(ctx context.Context, f BrowseFilter) ([]*Stored, int64, error) {
	f.Limit = store.PageLimit(f.Limit, 50)
	var w store.Conds
	if !f.Party.IsZero() {
		w.And(session.EitherSide(f.Party, w.Arg))
	}
	if !f.From.IsZero() {
		w.And("last_updated >= " + w.Arg(f.From.UnixMicro()))
	}
	if !f.To.IsZero() {
		w.And("last_updated < " + w.Arg(f.To.UnixMicro()))
	}
	if f.PriceStatus != "" {
		w.And("price_status = " + w.Arg(f.PriceStatus))
	}
	return store.CountedPage(ctx, s.db.Read(), storedColumns, "cdrs", w.Where(), "last_updated DESC, pk DESC",
		f.Limit, f.Offset, w.Args(), scanStored)
}
