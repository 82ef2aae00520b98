package upi

import (
	"context"
	"errors"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/printout"
)

// Sticker is what a printed QR sticker shows: the code (our landing page
// URL) and, for people, where it is and what it costs.
type Sticker struct {
	QRRef string
	// URL is the content of the QR code.
	URL          string
	LocationName string
	Address      string
	// Operator runs the charger (the location's operator, else the CPO
	// party).
	Operator string
	// EVSEID is the EVSE's evse_id, or its uid when it has none.
	EVSEID      string
	ConnectorID string
	Standard    string
	MaxPowerW   int64
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
	st := Sticker{QRRef: m.QRRef, URL: m.URL, LocationName: "Charging point " + m.LocationID, EVSEID: m.EVSEUID,
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

// Printout is the Renderer over internal/printout: the QR code as PNG or SVG,
// the A6 sticker and the A4 receipt as PDFs.
type Printout struct {
	// Issuer is the business name printed on receipts (ocpihub's eMSP).
	Issuer string
	// IssuerDetails are lines under it (address, GSTIN, support).
	IssuerDetails []string
}

// stickerQRPixels is the size of a sticker's PNG: sharp when printed at
// 10 cm.
const stickerQRPixels = 1024

// Sticker implements Renderer.
func (p Printout) Sticker(_ context.Context, format string, st Sticker) ([]byte, error) {
	switch format {
	case "png":
		return printout.QRPNG(st.URL, stickerQRPixels)
	case "svg":
		return printout.QRSVG(st.URL)
	}
	return printout.StickerPDF(printout.Sticker{URL: st.URL, QRRef: st.QRRef, LocationName: st.LocationName, Address: st.Address,
		EVSEID: st.EVSEID, ConnectorID: st.ConnectorID, Standard: st.Standard, MaxPowerW: st.MaxPowerW, TariffLines: st.Tariff,
		Operator: st.Operator})
}

// ReceiptPDF implements Renderer.
func (p Printout) ReceiptPDF(_ context.Context, r *Receipt) ([]byte, error) {
	paise := func(s string) int64 { v, _ := pg.ParseRupees(s); return v }
	name := r.LocationName
	if name == "" {
		name = "Charging location"
	}
	evse := r.EVSEID
	if evse == "" {
		evse = r.ConnectorID
	}
	issuer := p.Issuer
	if issuer == "" {
		issuer = r.Operator
	}
	return printout.ReceiptPDF(printout.Receipt{
		ID: r.ID, IssuedAt: r.IssuedAt.Time, Issuer: issuer, IssuerDetails: p.IssuerDetails, LocationName: name, Address: r.Address,
		EVSEID: evse, ConnectorID: r.ConnectorID, SessionStart: r.SessionStart.Time, SessionEnd: r.SessionEnd.Time,
		EnergyKWh: r.EnergyKWh, Captured: paise(r.Captured), Cost: paise(r.Cost), Refunded: paise(r.Refunded),
		NotRefundable: paise(r.NotRefundable), PaymentID: r.PGPaymentID, PayerVPA: r.PayerVPA, CDRID: r.CDRID,
		Tax: printTax(r),
	})
}

// printTax is the tax invoice of a receipt as printed, nil for a plain
// receipt.
func printTax(r *Receipt) *printout.TaxInvoice {
	t := r.TaxInvoice
	if t == nil {
		return nil
	}
	p := &printout.TaxInvoice{Number: t.Number, Date: t.Date, SupplierName: t.SupplierName, SupplierAddress: t.SupplierAddress,
		SupplierGSTIN: t.SupplierGSTIN, SupplierState: t.SupplierState, PlaceOfSupply: t.PlaceOfSupply + " (" + t.PlaceOfSupplyCode + ")",
		SAC: t.SAC, Description: t.Description, QuantityKWh: t.QuantityKWh, InterState: t.InterState, CGSTRate: t.CGSTRate,
		SGSTRate: t.SGSTRate, IGSTRate: t.IGSTRate, Taxable: t.Paise(t.TaxableValue), CGST: t.Paise(t.CGST), SGST: t.Paise(t.SGST),
		IGST: t.Paise(t.IGST), Total: t.Paise(t.Total)}
	for _, c := range r.CreditNotes {
		p.CreditNotes = append(p.CreditNotes, printout.CreditNote{Number: c.Number, Date: c.Date, Reason: c.Reason,
			Taxable: c.Paise(c.TaxableValue), CGST: c.Paise(c.CGST), SGST: c.Paise(c.SGST), IGST: c.Paise(c.IGST), Total: c.Paise(c.Total)})
	}
	return p
}

// intentQRPixels is the size of the QR code a desktop shows for a phone.
const intentQRPixels = 480

// QRPNG implements Renderer.
func (p Printout) QRPNG(_ context.Context, content string) ([]byte, error) {
	return printout.QRPNG(content, intentQRPixels)
}
