package hubtest

import (
	"context"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/store"
)

// SeedClientInfo adds n connected CPOs of country cc to the hub's
// HubClientInfo in one transaction, the i-th with the party id and
// last_updated (µs since the epoch) row gives: the long lists paging tests
// and benchmarks walk through.
func SeedClientInfo(t testing.TB, db *store.DB, n int, cc string, row func(i int) (partyID string, lastUpdated int64)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		for i := range n {
			pid, lu := row(i)
			if _, err := tx.Exec(ctx, "INSERT INTO client_info (role, country_code, party_id, status, last_updated) VALUES ($1, $2, $3, $4, $5)",
				"CPO", cc, pid, "CONNECTED", lu); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
