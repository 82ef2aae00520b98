package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// PullAll pulls a module's SENDER list from the hub the way the OCPI
// community's command-line client does: every request carries OCPI-to =
// the platform's own party, and pages are fetched by rebuilding
// ?offset=N&limit=L URLs itself, ignoring the Link header (and its cursor).
// It stops at X-Total-Count, or at a short page when the hub sends none.
func (p *Platform) PullAll(ctx context.Context, module string, limit int) ([]json.RawMessage, error) {
	base, ok := p.HubEndpoint(module, "SENDER")
	if !ok {
		return nil, fmt.Errorf("the hub lists no %s SENDER", module)
	}
	hd := http.Header{}
	hd.Set("OCPI-to-country-code", p.opts.CountryCode)
	hd.Set("OCPI-to-party-id", p.opts.PartyID)
	var out []json.RawMessage
	for offset := 0; ; {
		u := base + "?offset=" + strconv.Itoa(offset) + "&limit=" + strconv.Itoa(limit)
		resp, err := p.Raw(ctx, http.MethodGet, u, nil, hd)
		if err != nil {
			return out, err
		}
		if resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			return out, fmt.Errorf("GET %s: HTTP %d %s", u, resp.HTTPStatus, strings.TrimSpace(string(resp.Body)))
		}
		var page []json.RawMessage
		if err := json.Unmarshal(resp.Envelope.Data, &page); err != nil {
			return out, fmt.Errorf("GET %s: %w", u, err)
		}
		out = append(out, page...)
		offset += len(page)
		total, terr := strconv.Atoi(resp.Header.Get("X-Total-Count"))
		if len(page) == 0 || (terr == nil && offset >= total) || (terr != nil && len(page) < limit) {
			return out, nil
		}
	}
}
