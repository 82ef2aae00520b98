// Package printer draws what the UPI module prints: a QR mapping's sticker (PNG, SVG or A6 PDF), a
// receipt (A4 PDF, with its tax invoice and credit notes) and a UPI intent as a QR code. Renderer is the seam
// the module draws through; Printout implements it over internal/printout, None until one is wired.
package printer

import (
	"context"
	"errors"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/printout"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
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

// Renderer draws stickers, receipts and QR codes (internal/printout).
type Renderer interface {
	// Sticker draws the sticker of a QR mapping as "png", "svg" or "pdf".
	Sticker(ctx context.Context, format string, st Sticker) ([]byte, error)
	// ReceiptPDF draws a receipt.
	ReceiptPDF(ctx context.Context, r *receipt.Receipt) ([]byte, error)
	// QRPNG draws a QR code of content (the UPI intent on desktops).
	QRPNG(ctx context.Context, content string) ([]byte, error)
}

// ErrNoRenderer is returned by the renderer placeholder used until a real
// one is wired.
var ErrNoRenderer = errors.New("upi: no renderer for stickers, receipts and QR codes is configured")

// None is the renderer placeholder used until a real one is wired: it
// renders nothing (ErrNoRenderer).
type None struct{}

func (None) Sticker(context.Context, string, Sticker) ([]byte, error) {
	return nil, ErrNoRenderer
}
func (None) ReceiptPDF(context.Context, *receipt.Receipt) ([]byte, error) { return nil, ErrNoRenderer }
func (None) QRPNG(context.Context, string) ([]byte, error)                { return nil, ErrNoRenderer }

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
func (p Printout) ReceiptPDF(_ context.Context, r *receipt.Receipt) ([]byte, error) {
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
func printTax(r *receipt.Receipt) *printout.TaxInvoice {
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
