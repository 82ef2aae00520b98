package upi

import "github.com/ocpihub/ocpihub/internal/upi/receipt"

// The receipt documents and their e-mail (package receipt) under the names
// the hub uses: aliases, so upi.Receipt is receipt.Receipt.
type (
	Receipt       = receipt.Receipt
	TaxInvoice    = receipt.TaxInvoice
	GSTConfig     = receipt.GSTConfig
	Notifier      = receipt.Notifier
	ReceiptNotice = receipt.ReceiptNotice
	LogNotifier   = receipt.LogNotifier
	SMTPConfig    = receipt.SMTPConfig
	SMTPNotifier  = receipt.SMTPNotifier
)

// GST document kinds and the default service accounting code.
const (
	KindTaxInvoice = receipt.KindTaxInvoice
	KindCreditNote = receipt.KindCreditNote
	DefaultSAC     = receipt.DefaultSAC
)

// CheckGSTIN checks a GSTIN's form and check digit.
func CheckGSTIN(g string) error { return receipt.CheckGSTIN(g) }
