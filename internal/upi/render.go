package upi

import (
	"context"
	"errors"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/printer"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

// Sticker renders the sticker of a mapping as png, svg or pdf. A disabled
// mapping has no sticker (it would take no payment).
func (s *Service) Sticker(ctx context.Context, ref, format string) ([]byte, error) {
	if _, ok := printer.StickerFormats[format]; !ok {
		return nil, ocpi.Invalid("format", "must be png, svg or pdf")
	}
	m, err := s.QR(ctx, ref)
	if err != nil {
		return nil, err
	}
	if m.Status != qrmap.Active {
		return nil, &ocpi.Error{Code: ocpi.EINVALID, Field: "qr_ref", Issue: "is disabled",
			Message: "QR mapping " + ref + " is disabled; its sticker takes no payments"}
	}
	st := printer.Sticker{QRRef: m.QRRef, URL: m.URL, LocationName: "Charging point " + m.LocationID, EVSEID: m.EVSEUID,
		ConnectorID: m.ConnectorID, Operator: m.TenantID}
	// The directory may have lost the connector since; the sticker still
	// renders with what the mapping knows.
	if c, err := s.dir.Connector(ctx, m.Ref()); err == nil {
		if c.LocationName != "" {
			st.LocationName = c.LocationName
		}
		if c.EVSEID != "" {
			st.EVSEID = c.EVSEID
		}
		if c.Operator != "" {
			st.Operator = c.Operator
		}
		st.Address, st.Standard, st.MaxPowerW, st.Tariff = joinAddress(c.Address, c.City), c.Standard, c.MaxPowerW, c.TariffLines()
		if len(st.Tariff) > 4 {
			st.Tariff = st.Tariff[:4]
		}
	} else if !isNotFound(err) && ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
		return nil, err
	}
	b, err := s.render.Sticker(ctx, format, st)
	if errors.Is(err, printer.ErrNoRenderer) {
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
	_, none := s.render.(printer.None)
	return !none
}

// IntentQR draws an order's UPI intent link as a QR code (PNG): what a
// desktop shows for the driver's phone to scan.
func (s *Service) IntentQR(ctx context.Context, o *orders.Order) ([]byte, error) {
	if o.Intent == "" {
		return nil, errNotFound("UPI intent")
	}
	return s.render.QRPNG(ctx, o.Intent)
}
