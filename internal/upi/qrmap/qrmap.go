// Package qrmap is the book of UPI QR mappings (upi_qr_mappings): the
// reference printed on a sticker mapped to a connector, created against the
// hub's directory, listed and disabled. The payment module (package upi)
// reads a mapping when a driver scans it; the keyset page helpers (Where,
// ListPage) are shared by upi's listings.
package qrmap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
)

// Directory is what the mappings need of the hub's directory.
type Directory interface {
	// Connector returns a connector with its location, EVSE status and
	// tariff. An unknown location, EVSE or connector is an
	// EUNKNOWNLOCATION error.
	Connector(ctx context.Context, ref charger.ConnectorRef) (*charger.Connector, error)
	// Owner returns the CPO party of a location id when exactly one CPO uses
	// it.
	Owner(ctx context.Context, locationID string) (countryCode, partyID string, err error)
}

// Book creates, reads, lists and disables mappings.
type Book struct {
	DB     *store.DB
	Dir    Directory
	Clock  clock.Clock
	Logger *slog.Logger
	// PublicURL is the hub's public base URL: a sticker encodes
	// PublicURL/qr/{ref}.
	PublicURL string
	// NewRef generates a reference for a mapping created without one.
	NewRef func() string
}

// QR mapping states.
const (
	Active   = "ACTIVE"
	Disabled = "DISABLED"
)

// QRMapping maps the reference in a static QR sticker to a connector
// (upi.md §2, seed §2.13).
type QRMapping struct {
	QRRef string `json:"qr_ref"`
	// TenantID is the CPO party owning the location, "CC*PID".
	TenantID    string `json:"tenant_id"`
	LocationID  string `json:"location_id"`
	EVSEUID     string `json:"evse_uid"`
	ConnectorID string `json:"connector_id"`
	Status      string `json:"status"`
	// URL is what the QR code encodes: our landing page.
	URL         string        `json:"url"`
	CreatedAt   ocpi.DateTime `json:"created_at"`
	LastUpdated ocpi.DateTime `json:"last_updated"`

	countryCode, partyID string
	pk, lu               int64
}

// Ref returns the connector the mapping names.
func (m *QRMapping) Ref() charger.ConnectorRef {
	return charger.ConnectorRef{CountryCode: m.countryCode, PartyID: m.partyID, LocationID: m.LocationID, EVSEUID: m.EVSEUID, ConnectorID: m.ConnectorID}
}

// QRCreate asks for a new mapping. QRRef and TenantID are optional: a
// reference is generated, the tenant found from the location.
type QRCreate struct {
	QRRef       string `json:"qr_ref"`
	TenantID    string `json:"tenant_id"`
	LocationID  string `json:"location_id"`
	EVSEUID     string `json:"evse_uid"`
	ConnectorID string `json:"connector_id"`
}

var qrRefRE = regexp.MustCompile(`^[A-Za-z0-9_-]{4,36}$`)

// ParseTenant reads a tenant id: a CPO party as "CC*PID" (also "CC/PID", "CC-PID" or
// "CCPID"), returned upper case.
func ParseTenant(s string) (cc, pid string, err error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if i := strings.IndexAny(t, "/*-"); i >= 0 {
		cc, pid = t[:i], t[i+1:]
	} else if len(t) == 5 {
		cc, pid = t[:2], t[2:]
	}
	c := ocpi.NewCheck("")
	c.CountryCode("country_code", cc, true)
	c.PartyID("party_id", pid, true)
	if c.Err() != nil {
		return "", "", errors.New("want the CPO party as COUNTRY_CODE/PARTY_ID, e.g. IN/CPO (IN*CPO and IN-CPO are read too)")
	}
	return cc, pid, nil
}

// TenantOf writes a CPO party as a tenant id.
func TenantOf(cc, pid string) string { return ocpi.Key(cc) + "*" + ocpi.Key(pid) }

func (q *QRCreate) check() (cc, pid string, err error) {
	c := ocpi.NewCheck("")
	if q.QRRef != "" && !qrRefRE.MatchString(q.QRRef) {
		c.Fail("qr_ref", "must be 4 to 36 letters, digits, hyphens or underscores")
	}
	if q.TenantID != "" {
		var terr error
		if cc, pid, terr = ParseTenant(q.TenantID); terr != nil {
			c.Fail("tenant_id", "%s", terr.Error())
		}
	}
	c.CiString("location_id", q.LocationID, 36, true)
	c.CiString("evse_uid", q.EVSEUID, 36, true)
	c.CiString("connector_id", q.ConnectorID, 36, true)
	return cc, pid, c.Err()
}

// CreateQR creates a mapping for a connector of the directory. The connector
// must exist (EVSE not REMOVED); a connector with an active mapping, or a
// qr_ref used before, is a conflict naming the other mapping.
func (s *Book) Create(ctx context.Context, in QRCreate) (*QRMapping, error) {
	cc, pid, err := in.check()
	if err != nil {
		return nil, err
	}
	if cc == "" {
		if cc, pid, err = s.Dir.Owner(ctx, in.LocationID); err != nil {
			var oe *ocpi.Error
			if errors.As(err, &oe) && oe.Code == ocpi.EINVALID {
				return nil, ocpi.Invalid("tenant_id", "is required: location "+in.LocationID+" exists at several CPOs")
			}
			return nil, unknownConnector("location_id", err)
		}
	}
	conn, err := s.Dir.Connector(ctx, charger.ConnectorRef{CountryCode: cc, PartyID: pid, LocationID: in.LocationID, EVSEUID: in.EVSEUID, ConnectorID: in.ConnectorID})
	if err != nil {
		return nil, unknownConnector("connector_id", err)
	}
	m := &QRMapping{
		QRRef: in.QRRef, TenantID: TenantOf(cc, pid), LocationID: conn.LocationID, EVSEUID: conn.EVSEUID, ConnectorID: conn.ConnectorID,
		Status: Active, countryCode: ocpi.Key(cc), partyID: ocpi.Key(pid),
	}
	generated := m.QRRef == ""
	for attempt := 0; ; attempt++ {
		if generated {
			m.QRRef = s.NewRef()
		}
		err = s.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { return s.insert(ctx, tx, m) })
		if err == nil || !generated || attempt == 3 || !store.IsUniqueViolation(err) {
			break
		}
	}
	if store.IsUniqueViolation(err) {
		// A concurrent create won the race: name what it holds.
		return nil, s.conflict(ctx, s.DB.Read(), m)
	}
	if err != nil {
		return nil, err
	}
	s.Logger.InfoContext(ctx, "QR mapping created", "qr_ref", m.QRRef, "connector", m.Ref().String())
	return s.Get(ctx, m.QRRef)
}

// unknownConnector names the field of a directory lookup that failed.
func unknownConnector(field string, err error) error {
	var oe *ocpi.Error
	if errors.As(err, &oe) && (oe.Code == ocpi.EUNKNOWNLOCATION || oe.Code == ocpi.ENOTFOUND) {
		if oe.Field != "" {
			field = oe.Field
		}
		return &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: oe.Message + ": not in the hub's directory", Field: field, Issue: "is not in the directory"}
	}
	return err
}

func (s *Book) insert(ctx context.Context, tx *store.Tx, m *QRMapping) error {
	if err := s.conflict(ctx, tx, m); err != nil {
		return err
	}
	now := s.Clock.Now().UnixMicro()
	_, err := tx.Exec(ctx, `INSERT INTO upi_qr_mappings (qr_ref, tenant_id, country_code, party_id, location_id, evse_uid, connector_id,
		status, created_at, last_updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		m.QRRef, m.TenantID, m.countryCode, m.partyID, m.LocationID, m.EVSEUID, m.ConnectorID, Active, now)
	return err
}

// qrConflict returns the conflict error when the mapping's qr_ref exists or
// its connector has an active mapping.
func (s *Book) conflict(ctx context.Context, q store.Querier, m *QRMapping) error {
	var status, cref string
	err := q.QueryRow(ctx, "SELECT status, location_id || '/' || evse_uid || '/' || connector_id FROM upi_qr_mappings WHERE qr_ref = $1", m.QRRef).Scan(&status, &cref)
	if err == nil {
		return &ocpi.Error{Code: ocpi.ECONFLICT, Field: "qr_ref", Issue: "is already used",
			Message: fmt.Sprintf("qr_ref %s is already used by the %s mapping of connector %s; references are never reused", m.QRRef, strings.ToLower(status), cref)}
	}
	if !errors.Is(err, store.ErrNoRows) {
		return err
	}
	var other string
	err = q.QueryRow(ctx, `SELECT qr_ref FROM upi_qr_mappings WHERE country_code = $1 AND party_id = $2 AND location_id = $3
		AND evse_uid = $4 AND connector_id = $5 AND status = 'ACTIVE'`, m.countryCode, m.partyID, m.LocationID, m.EVSEUID, m.ConnectorID).Scan(&other)
	if err == nil {
		return &ocpi.Error{Code: ocpi.ECONFLICT, Field: "connector_id", Issue: "already has an active QR mapping",
			Message: fmt.Sprintf("connector %s already has the active QR mapping %s; disable it first to print a new sticker", m.Ref(), other)}
	}
	if errors.Is(err, store.ErrNoRows) {
		return nil
	}
	return err
}

const columns = "pk, qr_ref, tenant_id, country_code, party_id, location_id, evse_uid, connector_id, status, created_at, last_updated"

func (s *Book) scan(row interface{ Scan(...any) error }) (*QRMapping, error) {
	var m QRMapping
	var created, updated int64
	if err := row.Scan(&m.pk, &m.QRRef, &m.TenantID, &m.countryCode, &m.partyID, &m.LocationID, &m.EVSEUID, &m.ConnectorID,
		&m.Status, &created, &updated); err != nil {
		return nil, err
	}
	m.CreatedAt, m.LastUpdated, m.lu = ocpi.FromMicros(created), ocpi.FromMicros(updated), updated
	m.URL = s.URL(m.QRRef)
	return &m, nil
}

// QRURL is the landing page URL a sticker encodes.
func (s *Book) URL(ref string) string { return s.PublicURL + "/qr/" + ref }

// QR returns a mapping by its reference.
func (s *Book) Get(ctx context.Context, ref string) (*QRMapping, error) {
	m, err := s.scan(s.DB.Read().QueryRow(ctx, "SELECT "+columns+" FROM upi_qr_mappings WHERE qr_ref = $1", ref))
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "QR mapping " + ref + " not found"}
	}
	return m, err
}

// QRFilter selects mappings.
type QRFilter struct {
	// Status is ACTIVE or DISABLED ("" for both).
	Status     string
	LocationID string
}

// ListQR returns a page of mappings, oldest change first.
func (s *Book) List(ctx context.Context, f QRFilter, p ocpi.PageRequest) ([]*QRMapping, ocpi.Page, error) {
	l := store.List{Table: "upi_qr_mappings", Columns: columns}.WithPage(p)
	if f.Status != "" {
		Where(&l, "status = $%d", f.Status)
	}
	if f.LocationID != "" {
		Where(&l, "UPPER(location_id) = UPPER($%d)", f.LocationID)
	}
	return ListPage(ctx, s.DB.Read(), l, s.scan, func(m *QRMapping) (int64, int64) { return m.lu, m.pk })
}

// DisableQR disables a mapping: its sticker stops taking payments (the
// landing page says so) and the connector may get a new mapping. Disabling
// a disabled mapping changes nothing.
func (s *Book) Disable(ctx context.Context, ref string) (*QRMapping, error) {
	err := s.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		n, err := tx.Exec(ctx, "UPDATE upi_qr_mappings SET status = 'DISABLED', last_updated = $1 WHERE qr_ref = $2 AND status = 'ACTIVE'", s.Clock.Now().UnixMicro(), ref)
		if err != nil || n > 0 {
			return err
		}
		var one int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM upi_qr_mappings WHERE qr_ref = $1", ref).Scan(&one); errors.Is(err, store.ErrNoRows) {
			return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "QR mapping " + ref + " not found"}
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Logger.InfoContext(ctx, "QR mapping disabled", "qr_ref", ref)
	return s.Get(ctx, ref)
}

// Where adds a condition on one argument to a list; cond names the
// argument's placeholder with %d ("status = $%d").
func Where(l *store.List, cond string, arg any) {
	l.Args = append(l.Args, arg)
	l.Where = append(l.Where, fmt.Sprintf(cond, len(l.Args)))
}

// ListPage runs a List whose rows scan into T and returns the page with its
// keyset cursor.
func ListPage[T any](ctx context.Context, q store.Querier, l store.List, scan func(interface{ Scan(...any) error }) (T, error),
	key func(T) (int64, int64)) ([]T, ocpi.Page, error) {
	var page ocpi.Page
	total, err := l.Count(ctx, q)
	if err != nil {
		return nil, page, err
	}
	page.Total = total
	out := []T{}
	if l.Limit == 0 || int64(l.Offset) >= total {
		return out, page, nil
	}
	rows, err := l.Query(ctx, q)
	if err != nil {
		return nil, page, err
	}
	got, err := store.Collect(rows, func(r store.Row) (T, error) { return scan(r) })
	if err != nil {
		return nil, page, err
	}
	out = append(out, got...)
	if len(out) > 0 {
		lu, pk := key(out[len(out)-1])
		page.Last = &ocpi.Cursor{Offset: l.Offset + len(out), LastUpdated: lu, Key: pk}
	}
	return out, page, nil
}
