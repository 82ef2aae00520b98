package upi

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
)

// The connector a QR names and its estimates (package charger) under the
// names the hub uses: aliases, so upi.Connector is charger.Connector.
type (
	ConnectorRef      = charger.ConnectorRef
	Connector         = charger.Connector
	Estimate          = charger.Estimate
	LocationDirectory = charger.LocationDirectory
)

// TariffSummary is a tariff in lines of text for the driver pages.
func TariffSummary(t *ocpi.Tariff) []string { return charger.TariffSummary(t) }
