package upi

import (
	"context"
	"errors"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Sticker is what a printed QR sticker shows: the code (our landing page
// URL) and, for people, where it is and what it costs.
type Sticker struct {
	QRRef string
	// URL is the content of the QR code.
	URL          string
	LocationName string
	Address      string
	Operator     string
	// Connector names the EVSE and connector ("IN*CPO*E1 · connector 1").
	Connector string
	Standard  string
	PowerKW   string
	// Tariff is a summary in a few lines (TariffSummary).
	Tariff []string
}

// StickerFormats are the formats a sticker is rendered in, with their media
// types.
var StickerFormats = map[string]string{
	"png": "image/png",
	"svg": "image/svg+xml",
	"pdf": "application/pdf",
}

// Sticker renders the sticker of a mapping as png, svg or pdf. A disabled
// mapping has no sticker (it would take no payment).
func (s *Service) Sticker(ctx context.Context, ref, format string) ([]byte, error) {
	if _, ok := StickerFormats[format]; !ok {
		return nil, ocpi.Invalid("format", "must be png, svg or pdf")
	}
	m, err := s.QR(ctx, ref)
	if err != nil {
		return nil, err
	}
	if m.Status != QRActive {
		return nil, &ocpi.Error{Code: ocpi.EINVALID, Field: "qr_ref", Issue: "is disabled",
			Message: "QR mapping " + ref + " is disabled; its sticker takes no payments"}
	}
	st := Sticker{QRRef: m.QRRef, URL: m.URL, Connector: m.EVSEUID + " · connector " + m.ConnectorID}
	// The directory may have lost the connector since; the sticker still
	// renders with what the mapping knows.
	if c, err := s.dir.Connector(ctx, m.Ref()); err == nil {
		st.LocationName, st.Address, st.Operator = c.LocationName, joinAddress(c.Address, c.City), c.Operator
		st.Connector, st.Standard, st.PowerKW, st.Tariff = c.Label(), c.Standard, c.PowerKW(), c.TariffLines()
	} else if !isNotFound(err) && ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
		return nil, err
	}
	b, err := s.render.Sticker(ctx, format, st)
	if errors.Is(err, ErrNoRenderer) {
		return nil, &ocpi.Error{Code: ocpi.EUNAVAILABLE, Message: "stickers cannot be rendered: no renderer is configured", Err: err}
	}
	return b, err
}

func joinAddress(address, city string) string {
	switch {
	case address == "":
		return city
	case city == "":
		return address
	}
	return address + ", " + city
}

// CanDrawQR reports whether QR codes can be drawn (a renderer is wired).
func (s *Service) CanDrawQR(context.Context) bool {
	_, none := s.render.(noRenderer)
	return !none
}

// IntentQR draws an order's UPI intent link as a QR code (PNG): what a
// desktop shows for the driver's phone to scan.
func (s *Service) IntentQR(ctx context.Context, o *Order) ([]byte, error) {
	if o.Intent == "" {
		return nil, errNotFound("UPI intent")
	}
	return s.render.QRPNG(ctx, o.Intent)
}
