// Package command relays the asynchronous requests of the Commands and
// ChargingProfiles modules from eMSPs (and SCSPs) to CPOs, and ocpihub's own
// commands as an eMSP.
//
// The lifecycle of a command, every step stored (admin API /admin/commands):
//
//  1. The request is validated; its target is found: the CPO owning the
//     location (unknown location, EVSE or connector: status 2003 with
//     CommandResponse REJECTED), the CPO of the session (STOP_SESSION of a
//     session the eMSP does not have: UNKNOWN_SESSION), or of the
//     reservation (CANCEL_RESERVATION). OCPI-to-* names the CPO outright.
//  2. The command is stored with a new id, the requester's response_url and
//     the request, and its deadline, before the CPO is called.
//  3. It is forwarded to the CPO's RECEIVER with the hub's own response_url,
//     {public}/ocpi/2.2.1/cpo/{module}/{command}/{id} (the hub rewrites
//     response_url: the CPO never needs to reach the requester, and the hub
//     sees every result). The CPO's answer goes back to the requester as it
//     came; a CPO that cannot be reached is 4001/4003 (the command failed),
//     one that does not answer in time 4002 (the command stays open: its
//     result, if it comes, is relayed).
//  4. The CPO posts the result to the hub's URL: it is stored and relayed to
//     the requester's response_url (or in-process hook) by a job enqueued in
//     the same transaction, retried with backoff until delivered or given up.
//  5. No result by the CPO's timeout plus a margin: the requester gets a
//     CommandResult TIMEOUT, by the same relay (a periodic sweep closes
//     the commands past their deadline, Start). A result that comes after
//     that is recorded and not relayed; so is a repeat of a result already
//     relayed. Only a reservation's later CANCELED_RESERVATION is relayed
//     after its first result.
//
// Charging profiles follow the same path; their results have no TIMEOUT
// value, so a timed-out profile request is closed without a callback.
package command

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
)

// The modules a Service relays.
const (
	Module         = "commands"
	ProfilesModule = "chargingprofiles"
)

// Command states.
const (
	StateForwarding  = "forwarding"
	StateAccepted    = "accepted"
	StateUnconfirmed = "unconfirmed"
	StateRejected    = "rejected"
	StateFailed      = "failed"
	StateCompleted   = "completed"
	StateTimeout     = "timeout"
)

// Relay states of a result.
const (
	RelayPending   = "pending"
	RelayDelivered = "delivered"
	RelayFailed    = "failed"
	RelaySkipped   = "skipped"
)

// Directory finds locations in the hub's directory.
type Directory interface {
	// Locate returns the CPO publishing a location id (EUNKNOWNLOCATION when
	// none, EINVALID when several) and whether its location holds the EVSE
	// and connector named ("" = not checked).
	Locate(ctx context.Context, locationID, evseUID, connectorID string) (countryCode, partyID string, holds bool, err error)
	// CheckLocation is nil when the location of the CPO exists with the EVSE
	// and connector named ("" = not checked), EUNKNOWNLOCATION otherwise.
	CheckLocation(ctx context.Context, countryCode, partyID, locationID, evseUID, connectorID string) error
}

// Config tunes the Service. Zero values mean the defaults.
type Config struct {
	// PublicURL is the hub's base URL: the response_url the CPOs get starts
	// with it.
	PublicURL string
	// TimeoutMargin is added to the CPO's timeout before the requester gets
	// TIMEOUT (default 30 s).
	TimeoutMargin time.Duration
	// DefaultTimeout is the wait for a result when the CPO names none or did
	// not answer (default 60 s).
	DefaultTimeout time.Duration
	// MaxTimeout caps the timeout a CPO may ask for (default 1 h).
	MaxTimeout time.Duration
	// RelayAttempts bounds the deliveries of one result to a requester
	// (default 10).
	RelayAttempts int
	// RelayBackoff is the delay before relay retry number attempt (default
	// jobs.BackoffDelay).
	RelayBackoff func(attempt int) time.Duration
}

// Hook receives, in process, the results of commands ocpihub sends as its
// own eMSP. An error makes the relay job retry it.
type Hook func(ctx context.Context, r HookResult) error

// HookResult is a command result delivered to a Hook.
type HookResult struct {
	CommandID string
	Command   string
	// Result is what the CPO reported (or TIMEOUT, made by the hub).
	Result                 ocpi.CommandResult
	SessionID              string
	LocationID             string
	AuthorizationReference string
	// Request is the command's body as it was sent.
	Request json.RawMessage
}

// Service relays commands.
type Service struct {
	db       *store.DB
	jobs     *jobs.Client
	hub      *hub.Hub
	parties  *party.Service
	sessions *session.Service
	dir      Directory
	events   event.Emitter
	clock    clock.Clock
	logger   *slog.Logger
	cfg      Config
	client   *ocpiclient.Client

	mu    sync.RWMutex
	hooks map[string]Hook
	// stopSweep ends the deadline sweep (Start), nil when none runs.
	stopSweep func()
	// NewIDFunc makes command ids; tests may replace it.
	NewIDFunc func() string
}

// Deps are the services a Service works with. Events and Logger may be
// nil (nothing is recorded, nothing logged); without Jobs no worker runs.
type Deps struct {
	DB       *store.DB
	Jobs     *jobs.Client
	Hub      *hub.Hub
	Parties  *party.Service
	Sessions *session.Service
	Dir      Directory
	Client   *ocpiclient.Client
	Events   event.Emitter
	Clock    clock.Clock
	Logger   *slog.Logger
}

// New returns a Service and registers its workers on d.Jobs.
func New(d Deps, cfg Config) *Service {
	events, logger, jc := d.Events, d.Logger, d.Jobs
	events = event.OrDiscard(events)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TimeoutMargin <= 0 {
		cfg.TimeoutMargin = 30 * time.Second
	}
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 60 * time.Second
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = time.Hour
	}
	if cfg.RelayAttempts <= 0 {
		cfg.RelayAttempts = 10
	}
	if cfg.RelayBackoff == nil {
		cfg.RelayBackoff = jobs.BackoffDelay
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	s := &Service{db: d.DB, jobs: jc, hub: d.Hub, parties: d.Parties, sessions: d.Sessions, dir: d.Dir, client: d.Client, events: events,
		clock: d.Clock, logger: logger, cfg: cfg, hooks: map[string]Hook{}, NewIDFunc: newID}
	if jc != nil {
		jobs.AddWorker(jc, &relayWorker{s: s})
		jobs.AddWorker(jc, jobs.Func(s.timeOut))
	}
	return s
}

// RegisterHook names an in-process receiver of the results of ocpihub's own
// commands (Send with that hook name). Call it while wiring, before Start;
// the name is stored with each command, so it must stay the same across
// restarts.
func (s *Service) RegisterHook(name string, fn Hook) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks[name] = fn
}

func (s *Service) hook(name string) (Hook, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn, ok := s.hooks[name]
	return fn, ok
}

// resultURL is the response_url the hub gives the CPO for a command.
func (s *Service) resultURL(module, command, id string) string {
	return s.cfg.PublicURL + "/ocpi/2.2.1/cpo/" + module + "/" + url.PathEscape(command) + "/" + url.PathEscape(id)
}

func (s *Service) now() int64 { return s.clock.Now().UnixMicro() }

// deadlineAfter is when a command waiting timeout seconds times out.
func (s *Service) deadlineAfter(timeout time.Duration) int64 {
	timeout = min(max(timeout, 0), s.cfg.MaxTimeout)
	return s.clock.Now().Add(timeout + s.cfg.TimeoutMargin).UnixMicro()
}

// lockCommand locks a command row inside tx and returns its state and
// relay-relevant fields (ErrNotFound when absent).
func lockCommand(ctx context.Context, tx *store.Tx, id string) (*Record, error) {
	n, err := tx.Exec(ctx, "UPDATE commands SET updated_at = updated_at WHERE id = $1", id)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errUnknown(id)
	}
	return scanRecord(tx.QueryRow(ctx, "SELECT "+recordColumns+" FROM commands WHERE id = $1", id))
}

func errUnknown(id string) error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown command " + id}
}

// isOpen reports a state in which a result is still awaited.
func isOpen(state string) bool {
	return state == StateForwarding || state == StateAccepted || state == StateUnconfirmed
}

var errNoHook = errors.New("no hook registered under the command's hook name")
