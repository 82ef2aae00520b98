package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// DefaultCollapseAfter is how long a push waits for its receiver before a
// later push of the same thing may take its place (Config.CollapseAfter).
// A receiver that keeps up, within the delivery lag the hub aims at, gets
// every state; one that is behind gets the latest.
const DefaultCollapseAfter = time.Second

// collapsible are the modules whose PATCH replaces the fields it names at
// the receiver, so that a later PATCH naming the same fields makes an
// earlier one redundant. A Session PATCH is not among them: its
// charging_periods are appended to the receiver's list (sessions.md).
var collapsible = map[string]bool{"locations": true, "tokens": true}

// collapseFields is what a push rewrites at its path, as hub_push.fields
// keeps it: "*" for a PUT, the sorted top-level keys of a PATCH of a
// collapsible module, "" for anything that is never dropped.
func collapseFields(p Push) string {
	switch {
	case p.Method == http.MethodPut:
		return "*"
	case p.Method != http.MethodPatch || !collapsible[p.Module]:
		return ""
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(p.Body, &body) != nil || len(body) == 0 {
		return ""
	}
	keys := make([]string, 0, len(body))
	for k := range body {
		if k == "" || strings.Contains(k, ",") || k == "*" {
			return ""
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// covers reports whether a push that rewrites later makes one that rewrites
// earlier redundant, both at the same path: a PUT covers anything; a PATCH
// covers a PATCH whose every field it sets again.
func covers(later, earlier string) bool {
	switch {
	case earlier == "" || later == "":
		return false
	case later == "*":
		return true
	case earlier == "*":
		return false
	}
	set := strings.Split(later, ",")
	for k := range strings.SplitSeq(earlier, ",") {
		if !slices.Contains(set, k) {
			return false
		}
	}
	return true
}

// collapseFront returns the index of the first of an object's open rows to
// a receiver (in id order) that must be sent: the rows before it are
// pending, were never attempted, have waited at least CollapseAfter, and
// are each covered by a later open row of the same path, so the receiver
// ends in the same state without them, and never sees an older state after
// a newer one. A row whose attempt failed is never passed over: it is sent
// again, in order, before what follows it. (An attempt whose holder was
// killed mid-push was never counted; passing over it is still safe, since a
// later row covers whatever the receiver may have applied.)
func (h *Hub) collapseFront(rows []*head, now int64) int {
	if h.cfg.CollapseAfter < 0 {
		return 0
	}
	cutoff := now - h.cfg.CollapseAfter.Microseconds()
	for i, r := range rows {
		if r.attempts > 0 || r.fields == "" || r.createdAt > cutoff || !coveredLater(r, rows[i+1:]) {
			return i
		}
	}
	return len(rows) - 1
}

// coveredLater reports whether a row of later, at r's path, covers r.
func coveredLater(r *head, later []*head) bool {
	for _, l := range later {
		if l.path == r.path && covers(l.fields, r.fields) {
			return true
		}
	}
	return false
}

// supersedeRows marks the rows of ids superseded, those still pending, and
// returns which it marked.
func (h *Hub) supersedeRows(ctx context.Context, tx *store.Tx, ids []int64, now int64) (map[int64]bool, error) {
	gone := map[int64]bool{}
	if len(ids) == 0 {
		return gone, nil
	}
	in := make([]string, len(ids))
	for i, id := range ids {
		in[i] = strconv.FormatInt(id, 10)
	}
	marked, err := store.QueryAll(ctx, tx, func(r store.Row) (id int64, err error) { return id, r.Scan(&id) },
		`UPDATE hub_push SET state = $1, updated_at = $2 WHERE id IN (`+strings.Join(in, ",")+`) AND state = 'pending' RETURNING id`,
		stateSuperseded, now)
	for _, id := range marked {
		gone[id] = true
	}
	return gone, err
}

// allIn reports whether every row of rows is in set.
func allIn(rows []*head, set map[int64]bool) bool {
	for _, r := range rows {
		if !set[r.id] {
			return false
		}
	}
	return true
}

// countSuperseded counts, per module, the rows a claim passed over for the
// heads it could take.
func (h *Hub) countSuperseded(platformID int64, p *party.Platform, take []*head, gone map[int64]bool) {
	label := ""
	for _, hd := range take {
		if len(hd.passed) == 0 || !allIn(hd.passed, gone) {
			continue
		}
		if label == "" {
			label = fmt.Sprintf("platform-%d", platformID)
			if p != nil {
				to := receivingParty(p)
				label = party.Notation(to.CountryCode, to.PartyID)
			}
		}
		h.metrics.pushes.WithLabelValues(label, hd.module, outcomeSuperseded).Add(float64(len(hd.passed)))
	}
}
