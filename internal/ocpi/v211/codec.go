package v211

import (
	"encoding/json"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Encode writes a legacy object (a 2.1.1 type from this package, or a
// generic PATCH object) of module at level (locations only) in version v's
// wire form.
func Encode(v, module, level string, obj any) ([]byte, error) {
	b, err := Marshal(obj)
	if err != nil || v != V20 {
		return b, err
	}
	o, err := ocpi.ParseObject(b)
	if err != nil {
		return nil, err
	}
	To20(module, level, o)
	return Marshal(o)
}

// Decode reads a legacy body of module at level (locations only) sent in
// version v into out (a 2.1.1 type of this package, or an ocpi.Object for a
// PATCH). A body that is not JSON is EINVALIDJSON; JSON of the wrong shape is
// EINVALID naming the field.
func Decode(v, module, level string, raw []byte, now time.Time, out any) error {
	if v == V20 {
		o, err := ocpi.ParseObject(raw)
		if err != nil {
			if perr := ocpi.Decode(raw, &struct{}{}); perr != nil {
				return perr
			}
			return err
		}
		From20(module, level, o, now)
		if raw, err = Marshal(o); err != nil {
			return err
		}
	}
	if o, ok := out.(*ocpi.Object); ok {
		if err := ocpi.Decode(raw, &struct{}{}); err != nil {
			return err
		}
		p, err := ocpi.ParseObject(raw)
		if err != nil {
			return err
		}
		*o = p
		return nil
	}
	return ocpi.Decode(raw, out)
}

// LocationOut converts a stored 2.2.1 Location, EVSE or Connector (level)
// into version v's wire form. ok is false when it must not or cannot go to a
// legacy partner: an unpublished location, an EVSE or connector 2.1.1 cannot
// express.
func LocationOut(v, level string, body []byte) (out []byte, loss Loss, ok bool, err error) {
	var obj any
	switch level {
	case LevelLocation:
		var l ocpi.Location
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, nil, false, err
		}
		if !Shareable(&l) {
			return nil, Loss{"publish: the location is not published; not sent to legacy partners"}, false, nil
		}
		obj, loss = FromLocation(&l)
	case LevelEVSE:
		var e ocpi.EVSE
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, nil, false, err
		}
		obj, loss, ok = FromEVSE(&e)
		if !ok {
			return nil, loss, false, nil
		}
	default:
		var k ocpi.Connector
		if err := json.Unmarshal(body, &k); err != nil {
			return nil, nil, false, err
		}
		obj, loss, ok = FromConnector(&k)
		if !ok {
			return nil, loss, false, nil
		}
	}
	out, err = Encode(v, "locations", level, obj)
	return out, loss, err == nil, err
}

// TariffOut converts a stored 2.2.1 Tariff into version v's wire form; ok is
// false when none of its elements exists in 2.1.1.
func TariffOut(v string, body []byte) (out []byte, loss Loss, ok bool, err error) {
	var t ocpi.Tariff
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, nil, false, err
	}
	lt, loss, ok := FromTariff(&t)
	if !ok {
		return nil, loss, false, nil
	}
	out, err = Encode(v, "tariffs", "", lt)
	return out, loss, err == nil, err
}

// LocationIn reads a Location, EVSE or Connector (level) a legacy CPO of
// party cc/pid sent in version v, checks the 2.1.1 rules, and returns its
// 2.2.1 JSON (which the location service validates against 2.2.1).
func LocationIn(v, level string, raw []byte, cc, pid string, now time.Time) ([]byte, Loss, error) {
	var obj any
	var loss Loss
	c := ocpi.NewCheck("")
	switch level {
	case LevelLocation:
		var l Location
		if err := Decode(v, "locations", level, raw, now, &l); err != nil {
			return nil, nil, err
		}
		if l.Check(c); c.Err() == nil {
			obj, loss = l.To221(cc, pid)
		}
	case LevelEVSE:
		var e EVSE
		if err := Decode(v, "locations", level, raw, now, &e); err != nil {
			return nil, nil, err
		}
		if e.Check(c); c.Err() == nil {
			obj = e.To221()
		}
	default:
		var k Connector
		if err := Decode(v, "locations", level, raw, now, &k); err != nil {
			return nil, nil, err
		}
		if k.Check(c); c.Err() == nil {
			obj = k.To221()
		}
	}
	if err := c.Err(); err != nil {
		return nil, nil, err
	}
	out, err := json.Marshal(obj)
	return out, loss, err
}

// LocationPatchIn reads a PATCH of a Location, EVSE or Connector (level) a
// legacy CPO sent in version v and returns its 2.2.1 JSON. 2.1.1 does not
// require last_updated in a PATCH (2.2.1 does): a PATCH without one is
// stamped with now, the time the hub received it.
func LocationPatchIn(v, level string, raw []byte, now time.Time) ([]byte, Loss, error) {
	var o ocpi.Object
	if err := Decode(v, "locations", level, raw, now, &o); err != nil {
		return nil, nil, err
	}
	if _, ok := o["last_updated"]; !ok {
		o["last_updated"] = NewDateTime(ocpi.NewDateTime(now)).String()
	}
	p, loss, err := LocationPatchTo221(level, o)
	if err != nil {
		return nil, nil, err
	}
	out, err := Marshal(p)
	return out, loss, err
}

// TariffIn reads a Tariff a legacy CPO of party cc/pid sent in version v and
// returns its 2.2.1 JSON.
func TariffIn(v string, raw []byte, cc, pid string, now time.Time) ([]byte, error) {
	var t Tariff
	if err := Decode(v, "tariffs", "", raw, now, &t); err != nil {
		return nil, err
	}
	c := ocpi.NewCheck("")
	if t.Check(c); c.Err() != nil {
		return nil, c.Err()
	}
	return json.Marshal(t.To221(cc, pid))
}
