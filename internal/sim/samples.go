package sim

import (
	"fmt"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// SampleLocation returns a valid published location of cc/pid at lat/lon
// (decimal strings with 5 to 7 decimals), with one EVSE per status, each
// with a CCS2 DC connector: a location to push in demos and tests.
func SampleLocation(cc, pid, id, name, city, lat, lon string, at time.Time, statuses ...string) ocpi.Location {
	publish := true
	lu := ocpi.NewDateTime(at)
	volt, amp, power := int64(920), int64(150), int64(120000)
	loc := ocpi.Location{
		CountryCode: cc, PartyID: pid, ID: id, Publish: &publish, Name: name,
		Address: "1 Station Road", City: city, Country: "IND", ParkingType: "PARKING_LOT",
		Coordinates: &ocpi.GeoLocation{Latitude: lat, Longitude: lon}, TimeZone: "Asia/Kolkata", LastUpdated: lu,
	}
	for i, st := range statuses {
		uid := fmt.Sprintf("%s-E%d", id, i+1)
		loc.EVSEs = append(loc.EVSEs, ocpi.EVSE{
			UID: uid, EVSEID: fmt.Sprintf("%s*%s*E%s%d", cc, pid, id, i+1), Status: st, LastUpdated: lu,
			Capabilities: []string{"REMOTE_START_STOP_CAPABLE", "RFID_READER"},
			Connectors: []ocpi.Connector{{ID: "1", Standard: "IEC_62196_T2_COMBO", Format: "CABLE", PowerType: "DC",
				MaxVoltage: &volt, MaxAmperage: &amp, MaxElectricPower: &power, LastUpdated: lu}},
		})
	}
	return loc
}
