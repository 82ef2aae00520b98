// Package upiapi serves UPI QR charging's API: the payment gateway's and
// the SMS provider's webhooks, and the operator's QR codes, refunds,
// payments and receipts (the driver's pages are package pages). It
// declares their route rows; httpapi assembles them.
package upiapi

import (
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/upi"
)

// handlers answer the UPI routes through the kit.
type handlers struct {
	*kit.Kit
	cfg struct{ UPI *upi.Service }
}

// Module returns the UPI routes: a module without a tag of its own (they
// are documented under "upi").
func Module(k *kit.Kit, svc *upi.Service) route.Module {
	s := &handlers{Kit: k}
	s.cfg.UPI = svc
	return s.upiRows()
}
