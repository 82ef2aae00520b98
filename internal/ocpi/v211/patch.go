package v211

import (
	"encoding/json"
	"slices"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Levels of a location PATCH: what its URL names.
const (
	LevelLocation  = "location"
	LevelEVSE      = "evse"
	LevelConnector = "connector"
)

// LocationPatchFrom221 converts a 2.2.1 PATCH of a Location, EVSE or
// Connector (level) to 2.1.1, field by field: only the fields the PATCH
// carries appear in the result. ok is false when nothing a 2.1.1 receiver
// understands is left (only 2.2.1 fields changed), or when the change cannot
// be expressed (a connector's standard becoming one 2.1.1 lacks): the PATCH
// is then not sent.
func LocationPatchFrom221(level string, patch ocpi.Object) (out ocpi.Object, loss Loss, ok bool) {
	out = ocpi.Object{}
	for k, v := range patch {
		switch {
		case k == "last_updated":
			out[k] = legacyTime(v)
		case k == "country_code" || k == "party_id":
			// The owner is in the URL.
		case level == LevelLocation:
			if !locationField(k, v, out, &loss) {
				return nil, loss, false
			}
		case level == LevelEVSE:
			evseField(k, v, out, &loss)
		default:
			if !connectorField(k, v, out, &loss) {
				return nil, loss, false
			}
		}
	}
	for k := range out {
		if k != "last_updated" {
			return out, loss, true
		}
	}
	return nil, loss, false
}

func locationField(k string, v any, out ocpi.Object, loss *Loss) bool {
	switch k {
	case "publish":
		if b, _ := v.(bool); !b {
			// 2.1.1 cannot withdraw a location; the hub stops sending it.
			loss.Add(k, "a location withdrawn from publication stays at 2.1.1 receivers as last sent")
		}
	case "publish_allowed_to", "state":
		loss.Add(k, "not in 2.1.1")
	case "parking_type":
		s, _ := v.(string)
		out["type"] = locationType(s)
		if s == "ALONG_MOTORWAY" || s == "ON_DRIVEWAY" {
			loss.Add(k, "%s has no 2.1.1 LocationType; sent as OTHER", s)
		}
	case "facilities":
		var list []string
		if decodeInto(v, &list) == nil {
			out[k] = orEmpty(filterEnum(list, Facilities, k, loss))
		}
	case "address":
		s, _ := v.(string)
		if len([]rune(s)) > maxAddress {
			s = string([]rune(s)[:maxAddress])
			loss.Add(k, "cut to the 45 characters of 2.1.1")
		}
		out[k] = s
	case "coordinates":
		var g ocpi.GeoLocation
		if decodeInto(v, &g) == nil {
			c, lossy := coordinates(g)
			out[k] = c
			if lossy {
				loss.Add(k, "rounded to the 6 decimals of 2.1.1")
			}
		}
	case "opening_times":
		var h ocpi.Hours
		if decodeInto(v, &h) == nil {
			out[k] = fromHours(&h)
		}
	case "energy_mix":
		var m ocpi.EnergyMix
		if decodeInto(v, &m) == nil {
			out[k] = fromEnergyMix(&m)
		}
	case "evses":
		var evses []ocpi.EVSE
		if decodeInto(v, &evses) == nil {
			out[k] = appendFrom([]EVSE{}, k, evses, loss, FromEVSE)
		}
	default:
		out[k] = v
	}
	return true
}

func evseField(k string, v any, out ocpi.Object, loss *Loss) {
	switch k {
	case "capabilities":
		var list []string
		if decodeInto(v, &list) == nil {
			out[k] = orEmpty(filterEnum(list, Capabilities, k, loss))
		}
	case "status_schedule":
		var list []ocpi.StatusSchedule
		if decodeInto(v, &list) == nil {
			conv := []StatusSchedule{}
			for _, s := range list {
				conv = append(conv, StatusSchedule{PeriodBegin: NewDateTime(s.PeriodBegin), PeriodEnd: OptDateTime(s.PeriodEnd), Status: s.Status})
			}
			out[k] = conv
		}
	case "coordinates":
		var g ocpi.GeoLocation
		if decodeInto(v, &g) == nil {
			c, _ := coordinates(g)
			out[k] = c
		}
	case "connectors":
		var conns []ocpi.Connector
		if decodeInto(v, &conns) == nil {
			out[k] = appendFrom([]Connector{}, k, conns, loss, FromConnector)
		}
	default:
		out[k] = v
	}
}

func connectorField(k string, v any, out ocpi.Object, loss *Loss) bool {
	switch k {
	case "max_voltage":
		out["voltage"] = v
	case "max_amperage":
		out["amperage"] = v
	case "tariff_ids":
		var ids []string
		_ = decodeInto(v, &ids)
		if len(ids) == 0 {
			out["tariff_id"] = nil
		} else {
			out["tariff_id"] = ids[0]
			if len(ids) > 1 {
				loss.Add(k, "2.1.1 has one tariff_id; %d more dropped", len(ids)-1)
			}
		}
	case "max_electric_power":
		loss.Add(k, "not in 2.1.1")
	case "standard", "power_type":
		s, _ := v.(string)
		allowed := ConnectorTypes
		if k == "power_type" {
			allowed = PowerTypes
		}
		if !slices.Contains(allowed, s) {
			loss.Add(k, "%s is not a 2.1.1 value; the change is not sent", s)
			return false
		}
		out[k] = v
	default:
		out[k] = v
	}
	return true
}

// LocationPatchTo221 converts a 2.1.1 PATCH of a Location, EVSE or
// Connector (level) to 2.2.1, field by field.
func LocationPatchTo221(level string, patch ocpi.Object) (ocpi.Object, Loss, error) {
	var loss Loss
	out := ocpi.Object{}
	for k, v := range patch {
		switch {
		case level == LevelLocation && k == "type":
			s, _ := v.(string)
			switch s {
			case "OTHER", "UNKNOWN", "":
				if s == "OTHER" {
					loss.Add(k, "OTHER has no 2.2.1 parking_type; left out")
				}
				out["parking_type"] = nil
			default:
				out["parking_type"] = s
			}
		case level == LevelLocation && k == "evses":
			var evses []EVSE
			if err := decodeField(k, v, &evses); err != nil {
				return nil, nil, err
			}
			list := []ocpi.EVSE{}
			for i := range evses {
				list = append(list, evses[i].To221())
			}
			out[k] = list
		case level == LevelLocation && k == "opening_times":
			var h Hours
			if err := decodeField(k, v, &h); err != nil {
				return nil, nil, err
			}
			out[k] = h.to221()
		case level == LevelLocation && k == "energy_mix":
			var m EnergyMix
			if err := decodeField(k, v, &m); err != nil {
				return nil, nil, err
			}
			out[k] = m.to221()
		case level == LevelEVSE && k == "connectors":
			var conns []Connector
			if err := decodeField(k, v, &conns); err != nil {
				return nil, nil, err
			}
			list := []ocpi.Connector{}
			for i := range conns {
				list = append(list, conns[i].To221())
			}
			out[k] = list
		case level == LevelConnector && k == "voltage":
			out["max_voltage"] = v
		case level == LevelConnector && k == "amperage":
			out["max_amperage"] = v
		case level == LevelConnector && k == "tariff_id":
			if s, _ := v.(string); s != "" {
				out["tariff_ids"] = []string{s}
			} else {
				out["tariff_ids"] = nil
			}
		default:
			out[k] = v
		}
	}
	return out, loss, nil
}

// legacyTime rewrites a timestamp value in the legacy form (as it is when it
// does not parse: the receiver judges it).
func legacyTime(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	d, err := ocpi.ParseDateTime(s)
	if err != nil {
		return v
	}
	return NewDateTime(d).String()
}

func decodeInto(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func decodeField(field string, v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return ocpi.Invalid(field, "is malformed: "+err.Error())
	}
	return nil
}

func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
