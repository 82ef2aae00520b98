package legacy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

// Dialect is the hub.Dialect of one legacy version: it converts the hub's
// 2.2.1 pushes and forwarded requests into the partner's version, and the
// partner's answers back. Modules it does not know are not sent (a 2.2.1
// body is never passed to a legacy partner as it is).
type Dialect struct {
	version string
	rec     *Recorder
	now     func() time.Time
}

// NewDialect returns the dialect of version (v211.V211 or v211.V20).
func NewDialect(version string, rec *Recorder, now func() time.Time) *Dialect {
	if now == nil {
		now = time.Now
	}
	return &Dialect{version: version, rec: rec, now: now}
}

// Request implements hub.Dialect.
func (d *Dialect) Request(ctx context.Context, m *hub.Message) (bool, error) {
	d.rec.Traffic(d.version, m.Party, Out)
	var (
		body []byte
		loss v211.Loss
		ok   = true
		err  error
	)
	object := m.Module + " " + strings.TrimPrefix(m.Path, "/")
	switch m.Module {
	case "locations":
		level := locationLevel(m.Path)
		switch {
		case m.Method == http.MethodPut && m.Body != nil:
			body, loss, ok, err = v211.LocationOut(d.version, level, m.Body)
		case m.Method == http.MethodPatch && m.Body != nil:
			body, loss, ok, err = d.locationPatch(level, m.Body)
		}
	case "tariffs":
		if m.Method == http.MethodPut && m.Body != nil {
			body, loss, ok, err = v211.TariffOut(d.version, m.Body)
		}
	default:
		return false, nil
	}
	d.rec.Lost(ctx, d.version, m.Module, object, loss)
	if err != nil || !ok {
		return false, err
	}
	if body != nil {
		m.Body = body
	}
	return true, nil
}

func (d *Dialect) locationPatch(level string, body []byte) ([]byte, v211.Loss, bool, error) {
	p, err := ocpi.ParseObject(body)
	if err != nil {
		return nil, nil, false, err
	}
	out, loss, ok := v211.LocationPatchFrom221(level, p)
	if !ok {
		return nil, loss, false, nil
	}
	b, err := v211.Encode(d.version, "locations", level, out)
	return b, loss, err == nil, err
}

// Answer implements hub.Dialect: a location or tariff the partner returns
// is read into 2.2.1, owned by the party of the path.
func (d *Dialect) Answer(ctx context.Context, m hub.Message, data json.RawMessage) (json.RawMessage, error) {
	seg := strings.Split(strings.Trim(m.Path, "/"), "/")
	if m.Method != http.MethodGet || len(seg) < 3 {
		return data, nil
	}
	switch m.Module {
	case "locations":
		out, loss, err := v211.LocationIn(d.version, locationLevel(m.Path), data, seg[0], seg[1], d.now())
		d.rec.Lost(ctx, d.version, m.Module, "answer "+m.Path, loss)
		return out, err
	case "tariffs":
		return v211.TariffIn(d.version, data, seg[0], seg[1], d.now())
	}
	return data, nil
}

// locationLevel tells what a locations push path names:
// /CC/PID/LOC, /CC/PID/LOC/EVSE or /CC/PID/LOC/EVSE/CONNECTOR.
func locationLevel(path string) string {
	switch strings.Count(strings.Trim(path, "/"), "/") {
	case 3:
		return v211.LevelEVSE
	case 4:
		return v211.LevelConnector
	}
	return v211.LevelLocation
}
