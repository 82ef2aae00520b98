package hub

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/delivery"
)

// CollapseFields and Covers expose the collapse rules to the table tests.
var (
	CollapseFields = collapseFields
	Covers         = covers
)

// ForgetLeases makes this process forget the receivers' leases it holds, as
// a process that never held them: what the database says is then all its
// claims go by (tests that leave a lease as another, crashed, process
// would).
func (h *Hub) ForgetLeases() {
	h.leases.mu.Lock()
	defer h.leases.mu.Unlock()
	clear(h.leases.until)
}

// Claim runs one claim of the outbox for platformID, as the receiver's
// worker in the delivery engine does.
func (h *Hub) Claim(ctx context.Context, platformID int64, n int) (delivery.Claim, error) {
	return pushQueue{h: h}.Claim(ctx, platformID, n)
}
