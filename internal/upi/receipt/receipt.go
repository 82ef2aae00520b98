package receipt

import (
	"fmt"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
)

// Receipt is the receipt of a settled payment (upi.md §6, seed §2.17): the
// CDR and the money. Amounts are decimal rupees; Amount is what the driver
// paid in the end (the capture less the refunds).
type Receipt struct {
	ID        string        `json:"id"`
	CDRID     string        `json:"cdr_id"`
	PaymentID string        `json:"payment_id"`
	Amount    string        `json:"amount"`
	Currency  string        `json:"currency"`
	EnergyKWh string        `json:"energy_kwh"`
	Timestamp ocpi.DateTime `json:"timestamp"`

	PGPaymentID   string        `json:"pg_payment_id"`
	PayerVPA      string        `json:"payer_vpa,omitempty"`
	Captured      string        `json:"captured"`
	Cost          string        `json:"cost"`
	Refunded      string        `json:"refunded"`
	NotRefundable string        `json:"not_refundable"`
	Shortfall     string        `json:"shortfall"`
	SessionStart  ocpi.DateTime `json:"session_start"`
	SessionEnd    ocpi.DateTime `json:"session_end"`
	LocationName  string        `json:"location_name,omitempty"`
	Address       string        `json:"address,omitempty"`
	EVSEID        string        `json:"evse_id,omitempty"`
	ConnectorID   string        `json:"connector_id"`
	Operator      string        `json:"operator"`
	IssuedAt      ocpi.DateTime `json:"issued_at"`
	// URL is the receipt's page; its PDF is URL + ".pdf". ShortURL leads
	// to it too, for SMS.
	URL      string `json:"url"`
	ShortURL string `json:"short_url,omitempty"`
	// TaxInvoice is the receipt's legal form when the operator is
	// registered for GST (Config.GST); CreditNotes are the corrections
	// issued against it since, oldest first.
	TaxInvoice  *TaxInvoice   `json:"tax_invoice,omitempty"`
	CreditNotes []*TaxInvoice `json:"credit_notes,omitempty"`
}

// Display returns an amount of the receipt as people read it ("₹1,234.50").
func (r *Receipt) Display(rupees string) string {
	p, err := pg.ParseRupees(rupees)
	if err != nil {
		return rupees
	}
	return pg.Amount{Paise: p, Currency: r.Currency}.Display()
}

// Duration is the session's length, rounded to the minute ("1 h 05 min").
func (r *Receipt) Duration() string {
	d := r.SessionEnd.Sub(r.SessionStart.Time).Round(time.Minute)
	if d <= 0 {
		return ""
	}
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h == 0 {
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d h %02d min", h, m)
}
