package party

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/party/ident"
)

// Roles, party references, statuses and the caller (package ident) under
// the names the hub uses: aliases and one-line forwards, so party.Role is
// ident.Role and every caller stays as it was.

type (
	Role       = ident.Role
	PartyRef   = ident.PartyRef
	CallerKind = ident.CallerKind
	Caller     = ident.Caller
	Status     = ident.Status
)

const (
	RoleCPO            = ident.RoleCPO
	RoleEMSP           = ident.RoleEMSP
	RoleHUB            = ident.RoleHUB
	RoleNAP            = ident.RoleNAP
	RoleNSP            = ident.RoleNSP
	RoleOTHER          = ident.RoleOTHER
	RoleSCSP           = ident.RoleSCSP
	RolePTP            = ident.RolePTP
	CallerPlatform     = ident.CallerPlatform
	CallerRegistering  = ident.CallerRegistering
	CallerAdmin        = ident.CallerAdmin
	StatusPending      = ident.StatusPending
	StatusConnected    = ident.StatusConnected
	StatusSuspended    = ident.StatusSuspended
	StatusUnregistered = ident.StatusUnregistered
)

var (
	Roles = ident.Roles
)

func WithCaller(ctx context.Context, c *Caller) context.Context { return ident.WithCaller(ctx, c) }

func CallerFrom(ctx context.Context) *Caller { return ident.CallerFrom(ctx) }

func Notation(cc, pid string) string { return ident.Notation(cc, pid) }

func ParseParty(s string) (cc, pid string, err error) { return ident.ParseParty(s) }

func ParsePartyRef(s string) (PartyRef, error) { return ident.ParsePartyRef(s) }
