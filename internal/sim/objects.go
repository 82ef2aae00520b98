package sim

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// LocationObject returns a valid Location of a CPO with the given EVSEs
// (by uid), each AVAILABLE with one Type 2 connector "1", for tests and
// the demo.
func LocationObject(cc, pid, id string, evseUIDs ...string) map[string]any {
	// A sample object belongs to no platform: it is stamped with the real
	// clock, like the platforms' default.
	now := ocpi.NewDateTime(clock.Real{}.Now())
	evses := make([]any, 0, len(evseUIDs))
	for _, uid := range evseUIDs {
		evses = append(evses, map[string]any{"uid": uid, "evse_id": "IN*" + pid + "*E" + uid, "status": "AVAILABLE",
			"capabilities": []any{"REMOTE_START_STOP_CAPABLE", "CHARGING_PROFILE_CAPABLE", "CHARGING_PREFERENCES_CAPABLE"},
			"last_updated": now, "connectors": []any{map[string]any{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET",
				"power_type": "AC_3_PHASE", "max_voltage": 230, "max_amperage": 32, "last_updated": now}}})
	}
	return map[string]any{"country_code": cc, "party_id": pid, "id": id, "publish": true, "name": "Station " + id,
		"address": "MG Road 1", "city": "Bengaluru", "country": "IND",
		"coordinates": map[string]any{"latitude": "12.97160", "longitude": "77.59460"}, "time_zone": "Asia/Kolkata",
		"evses": evses, "last_updated": now}
}

// PublishLocation pushes LocationObject of this CPO to the hub.
func (c *CPO) PublishLocation(ctx context.Context, id string, evseUIDs ...string) error {
	return c.PutLocation(ctx, id, LocationObject(c.opts.CountryCode, c.opts.PartyID, id, evseUIDs...))
}
