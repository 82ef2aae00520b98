package upi

import (
	"context"
	"errors"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
)

// The module's seams to the rest of the hub are small interfaces implemented
// by the services that own the data: the location directory, the command
// service, the token service, the session service and the renderer.

// Directory looks connectors up in the hub's location directory.
type Directory interface {
	// Connector returns a connector with its location, EVSE status and
	// tariff. An unknown location, EVSE or connector is an
	// EUNKNOWNLOCATION error.
	Connector(ctx context.Context, ref charger.ConnectorRef) (*charger.Connector, error)
	// Owner returns the CPO party of a location id when exactly one CPO uses
	// it.
	Owner(ctx context.Context, locationID string) (countryCode, partyID string, err error)
}

// Commands sends commands as ocpihub's own eMSP (the command service,
// through an adapter in the app's wiring). The CommandResult reaches the
// payment later through Service.CommandResult.
type Commands interface {
	// StartSession sends START_SESSION to the CPO with the hub's own
	// response_url and returns the command's id and the CPO's
	// CommandResponse. ErrStartPending (with the id) means the command
	// left but its answer did not come in time: its result, or TIMEOUT,
	// will still come. Any other error means the CPO was not reached.
	StartSession(ctx context.Context, req StartRequest) (commandID string, resp *ocpi.CommandResponse, err error)
}

// ErrStartPending is returned by Commands.StartSession when the CPO did not
// answer in time but may still act on the command.
var ErrStartPending = errors.New("upi: START_SESSION sent, the CPO's answer is pending")

// StartRequest is a START_SESSION to send.
type StartRequest struct {
	// PaymentID is the payment the session is for.
	PaymentID string
	// CountryCode and PartyID name the CPO.
	CountryCode, PartyID string
	// Start is the command; its response_url is set by the command service.
	Start ocpi.StartSession
}

// Tokens issues ocpihub's own eMSP tokens (token.Service implements it).
type Tokens interface {
	IssueTx(ctx context.Context, tx *store.Tx, t ocpi.Token) (*ocpi.Token, error)
}
