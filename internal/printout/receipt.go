package printout

import (
	"fmt"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/pg"
)

// Receipt is what a driver's receipt for one UPI-paid charging session
// shows. Amounts are int64 paise of Indian rupees; times are instants
// (stored in UTC by the caller, printed in IST).
type Receipt struct {
	// ID is the receipt's id. Required.
	ID string
	// IssuedAt is when the receipt was issued. Required; also the PDF's
	// creation date, so the same receipt always renders to the same bytes.
	IssuedAt time.Time
	// Issuer is the business name of the hub operator acting as the
	// driver's eMSP, who took the payment. Required.
	Issuer string
	// IssuerDetails are optional lines printed under the issuer's name:
	// address, GSTIN, support contact.
	IssuerDetails []string

	// LocationName is the charging location's name. Required.
	LocationName string
	// Address is the location's postal address; "\n" starts a new line.
	Address string
	// EVSEID is the EVSE's evse_id (or its uid when it has none). Required.
	EVSEID string
	// ConnectorID is the connector's id within the EVSE. Required.
	ConnectorID string

	// SessionStart and SessionEnd bound the charging session (the CDR's
	// start_date_time and end_date_time). Required; the end is not before
	// the start.
	SessionStart, SessionEnd time.Time
	// EnergyKWh is the energy delivered in kWh as a decimal string (the
	// CDR's total_energy, e.g. "12.345"), printed exactly as given.
	EnergyKWh string

	// Captured is the amount the driver paid by UPI before charging.
	Captured int64
	// Cost is the session's cost from the CDR (total_cost incl. VAT/GST).
	Cost int64
	// Refunded is the sum of the refunds issued to the driver.
	Refunded int64
	// NotRefundable is an excess below the gateway's minimum refund
	// (₹1.00) that could not be refunded; under 100 paise.
	NotRefundable int64

	// PaymentID is the payment gateway's payment id. Required.
	PaymentID string
	// PayerVPA is the UPI address that paid; it is printed masked
	// ("dr****ar@okaxis"). Optional.
	PayerVPA string
	// CDRID is the id of the CDR the cost comes from. Required.
	CDRID string
	// TariffLines summarise the tariff applied, one printed line each.
	TariffLines []string
	// Tax, when set, makes the receipt a GST tax invoice: it is titled so,
	// the supplier heads it, and the tax split follows the payment.
	Tax *TaxInvoice
}

// Paid is what the driver paid in the end: captured less refunded.
func (r Receipt) Paid() int64 { return r.Captured - r.Refunded }

func (r Receipt) validate() error {
	for _, f := range []struct{ name, v string }{
		{"id", r.ID}, {"issuer", r.Issuer}, {"location_name", r.LocationName},
		{"evse_id", r.EVSEID}, {"connector_id", r.ConnectorID},
		{"payment_id", r.PaymentID}, {"cdr_id", r.CDRID},
	} {
		if strings.TrimSpace(f.v) == "" {
			return invalid(f.name, "required")
		}
	}
	switch {
	case r.IssuedAt.IsZero():
		return invalid("issued_at", "required")
	case r.SessionStart.IsZero():
		return invalid("session_start", "required")
	case r.SessionEnd.IsZero():
		return invalid("session_end", "required")
	case r.SessionEnd.Before(r.SessionStart):
		return invalid("session_end", "before session_start")
	case !isDecimal(r.EnergyKWh):
		return invalid("energy_kwh", "not a non-negative decimal number")
	}
	for _, a := range []struct {
		name  string
		paise int64
	}{{"captured", r.Captured}, {"cost", r.Cost}, {"refunded", r.Refunded}, {"not_refundable", r.NotRefundable}} {
		if a.paise < 0 {
			return invalid(a.name, "negative")
		}
	}
	if r.Tax != nil {
		if err := r.Tax.validate(); err != nil {
			return err
		}
	}
	switch {
	case r.NotRefundable >= 100:
		return invalid("not_refundable", "must be below ₹1.00; a larger excess is refundable")
	case r.Refunded > r.Captured-r.NotRefundable:
		return invalid("refunded", "refunded plus not refundable exceeds the amount captured")
	}
	return nil
}

// Receipt page: A4 portrait, the paper drivers and fleet accountants print
// on; margins of 18 mm.
const (
	receiptW      = 210.0
	receiptH      = 297.0
	receiptMargin = 18.0
	receiptLabelW = 58.0
	receiptMoneyW = 32.0
	receiptLine   = 5.6
	// taxInvoiceLine is the row height of a receipt that is a tax invoice.
	taxInvoiceLine = 4.2
)

// ReceiptPDF renders a driver's receipt as a one-page A4 PDF: the issuer,
// the receipt id and issue time, the location and connector, the session's
// times, duration and energy, the money (captured, session cost, refunded,
// not refundable, final amount paid) in rupees with Indian digit grouping,
// the payment reference (gateway payment id, masked payer VPA), the CDR id
// and the tariff. All times are shown in IST. Missing or inconsistent data
// is an ErrInvalid.
func ReceiptPDF(r Receipt) ([]byte, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	d, err := newDoc(receiptW, receiptH, receiptMargin, "Receipt "+r.ID, r.IssuedAt)
	if err != nil {
		return nil, err
	}
	w := receiptW - 2*receiptMargin
	issuer, details, title := r.Issuer, r.IssuerDetails, "Charging receipt"
	if t := r.Tax; t != nil {
		d.line = taxInvoiceLine
		issuer, title = t.SupplierName, "Tax invoice"
		details = append([]string{t.SupplierAddress, "GSTIN " + t.SupplierGSTIN + " · State " + t.SupplierState}, details...)
	}
	d.SetXY(receiptMargin, receiptMargin)
	d.style(true, 16, black)
	d.lines(w, 7, issuer, "L")
	d.style(false, 9, grey)
	for _, l := range details {
		d.lines(w, 4.2, l, "L")
	}

	d.SetXY(receiptMargin, d.GetY()+6)
	d.style(true, 20, black)
	d.lines(w, 9, title, "L")
	d.rule(w)

	if r.Tax != nil {
		d.taxInvoice(w, r.Tax)
		d.SetY(d.GetY() + 2)
	}
	d.row(w, "Receipt no.", r.ID, false)
	d.row(w, "Issued", formatIST(r.IssuedAt), false)

	d.section(w, "Charging session")
	d.row(w, "Location", r.LocationName, false)
	if r.Address != "" {
		d.row(w, "Address", r.Address, false)
	}
	d.row(w, "EVSE", r.EVSEID, false)
	d.row(w, "Connector", r.ConnectorID, false)
	d.row(w, "Started", formatIST(r.SessionStart), false)
	d.row(w, "Ended", formatIST(r.SessionEnd), false)
	d.row(w, "Duration", formatDuration(r.SessionEnd.Sub(r.SessionStart)), false)
	d.row(w, "Energy", r.EnergyKWh+" kWh", false)
	d.row(w, "CDR", r.CDRID, false)

	d.section(w, "Payment")
	d.money("Paid by UPI", r.Captured, false)
	d.money("Cost of the session", r.Cost, false)
	d.money("Refunded", r.Refunded, false)
	if r.NotRefundable > 0 {
		d.money("Not refundable (below ₹1.00)", r.NotRefundable, false)
	}
	d.money("Amount paid", r.Paid(), true)
	d.row(w, "Payment reference", r.PaymentID, false)
	if r.PayerVPA != "" {
		d.row(w, "Paid from", maskVPA(r.PayerVPA), false)
	}

	if len(r.TariffLines) > 0 {
		d.section(w, "Tariff")
		d.style(false, 10, black)
		for _, l := range r.TariffLines {
			d.SetX(receiptMargin)
			d.lines(w, d.rowH(), l, "L")
		}
	}

	footGap := 8.0
	if r.Tax != nil {
		footGap = 3
	}
	d.SetXY(receiptMargin, d.GetY()+footGap)
	d.style(false, 8, grey)
	d.lines(w, 4, "Times are India Standard Time (UTC+05:30). Amounts are in Indian rupees. "+
		"Refunds reach the paying UPI account within the time set by the bank.", "L")
	if d.GetY() > receiptH-receiptMargin {
		return nil, invalid("receipt", fmt.Sprintf("does not fit on one A4 page (%.0f mm)", d.GetY()))
	}
	return d.bytes()
}

// rowH is the height of a row of the receipt.
func (d *doc) rowH() float64 {
	if d.line > 0 {
		return d.line
	}
	return receiptLine
}

// section starts a titled block of the receipt.
func (d *doc) section(w float64, title string) {
	gap := 5.0
	if d.line > 0 {
		gap = 2.5
	}
	d.SetXY(receiptMargin, d.GetY()+gap)
	d.style(true, 12, black)
	d.lines(w, 6.5, title, "L")
	d.rule(w)
}

// rule draws a thin line across the text width under the current position.
func (d *doc) rule(w float64) {
	y := d.GetY() + 1
	d.SetDrawColor(180, 180, 180)
	d.SetLineWidth(0.2)
	d.Line(receiptMargin, y, receiptMargin+w, y)
	d.SetY(y + 1.5)
}

// row writes a label and its value (wrapped in the value column).
func (d *doc) row(w float64, label, value string, bold bool) {
	y := d.GetY()
	d.SetXY(receiptMargin, y)
	labelColour := grey
	if bold {
		labelColour = black
	}
	d.style(bold, 10, labelColour)
	d.lines(receiptLabelW, d.rowH(), label, "L")
	labelEnd := d.GetY()
	d.SetXY(receiptMargin+receiptLabelW, y)
	d.style(bold, 10, black)
	d.lines(w-receiptLabelW, d.rowH(), value, "L")
	d.SetY(max(labelEnd, d.GetY()))
}

// money writes a label and an amount in rupees, right-aligned in a column
// so that the decimal points line up.
func (d *doc) money(label string, paise int64, bold bool) {
	labelColour := grey
	if bold {
		labelColour = black
	}
	d.SetX(receiptMargin)
	d.style(bold, 10, labelColour)
	d.CellFormat(receiptLabelW, d.rowH(), d.clean(label), "", 0, "L", false, 0, "")
	d.style(bold, 10, black)
	d.CellFormat(receiptMoneyW, d.rowH(), pg.FormatINR(paise), "", 1, "R", false, 0, "")
}

// isDecimal reports whether s is a non-negative decimal number: digits,
// optionally a point and more digits.
func isDecimal(s string) bool {
	whole, frac, hasPoint := strings.Cut(s, ".")
	return digits(whole) && (!hasPoint || digits(frac))
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// maskVPA hides most of a UPI address's user part, keeping the provider
// handle: "driver.kumar@okaxis" → "dr****ar@okaxis", "ravi@ybl" →
// "r****@ybl". The number of stars is fixed, so the length is hidden too.
func maskVPA(vpa string) string {
	user, handle, hasAt := strings.Cut(vpa, "@")
	u := []rune(user)
	var masked string
	switch {
	case len(u) >= 8:
		masked = string(u[:2]) + "****" + string(u[len(u)-2:])
	case len(u) >= 3:
		masked = string(u[:1]) + "****"
	default:
		masked = "****"
	}
	if hasAt {
		masked += "@" + handle
	}
	return masked
}
