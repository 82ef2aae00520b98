package token

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// BrowseFilter selects tokens for the operator's console.
type BrowseFilter struct {
	// CountryCode and PartyID restrict the list to one eMSP.
	CountryCode, PartyID string
	// Valid keeps valid tokens ("true") or invalid ones ("false"); "": both.
	Valid     string
	Whitelist string
	// UID keeps tokens whose uid starts with it (case-insensitive, as uids
	// are stored upper case).
	UID           string
	Limit, Offset int
}

// Browse returns a page of every token the hub holds (eMSPs' and its own),
// most recently updated first, and how many the filter keeps.
func (s *Service) Browse(ctx context.Context, f BrowseFilter) ([]ocpi.Token, int64, error) {
	f.Limit = store.PageLimit(f.Limit, 50)
	var w store.Conds
	if f.CountryCode != "" {
		w.And("country_code = "+w.Arg(ocpi.Key(f.CountryCode)), "party_id = "+w.Arg(ocpi.Key(f.PartyID)))
	}
	switch f.Valid {
	case "true", "false":
		w.And("valid = " + w.Arg(f.Valid == "true"))
	}
	if f.Whitelist != "" {
		w.And("whitelist = " + w.Arg(f.Whitelist))
	}
	if f.UID != "" {
		// A prefix match with LIKE's wildcards taken literally.
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(ocpi.Key(f.UID))
		w.And("uid LIKE " + w.Arg(esc+"%") + ` ESCAPE '\'`)
	}
	return store.CountedPage(ctx, s.db.Read(), "body", "tokens", w.Where(), "last_updated DESC, pk DESC",
		f.Limit, f.Offset, w.Args(), func(r store.Row) (ocpi.Token, error) {
			var body []byte
			var t ocpi.Token
			if err := r.Scan(&body); err != nil {
				return t, err
			}
			return t, json.Unmarshal(body, &t)
		})
}
