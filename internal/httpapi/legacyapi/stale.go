package legacyapi

import (
	"bytes"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// sentLastUpdated reports whether a legacy PATCH body carries last_updated
// (OCPI 2.1.1 does not require one; the hub stamps the arrival time on one
// without, see stampPatch).
func sentLastUpdated(raw []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return false
	}
	v, ok := top["last_updated"]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// unstampedStale handles the result of writing a legacy PATCH: one the hub
// stamped on arrival (sent is false) has no time of its own, so it cannot be
// stale; when a concurrent write of the same object committed a later stamp
// first, again writes it once more at the stored last_updated (equal
// timestamps are applied, ocpi.StaleError). Any other result is returned as
// it is.
func unstampedStale(sent bool, err error, again func(lastUpdated string) error) error {
	st := ocpi.AsStale(err)
	if sent || st == nil || st.Stored.IsZero() {
		return err
	}
	return again(st.Stored.String())
}

// writePatch writes body, a legacy PATCH converted from raw, with write; a
// PATCH the hub stamped on arrival that a concurrent write overtook is
// written once more at the stored last_updated (unstampedStale).
func writePatch(raw, body []byte, write func(body []byte) error) error {
	err := write(body)
	return unstampedStale(sentLastUpdated(raw), err, func(lu string) error {
		body, err := restampBody(body, lu)
		if err != nil {
			return err
		}
		return write(body)
	})
}

// restampBody sets the last_updated of a JSON object body.
func restampBody(body []byte, lastUpdated string) ([]byte, error) {
	o, err := ocpi.ParseObject(body)
	if err != nil {
		return nil, err
	}
	o["last_updated"] = lastUpdated
	return ocpi.MarshalObject(o)
}
