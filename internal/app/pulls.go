package app

import (
	"context"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/token"
)

// wirePulls makes tokens, sessions and CDRs pullable by the Syncer, beside
// locations and tariffs: the recovery pulls from a peer hub's senders (the
// periodic pull asks peer hubs only; `ocpihub sync` asks any partner). A
// pulled object is stored as the platform's push of it would be, so it is
// never routed back to the platform it came from.
func (a *App) wirePulls() {
	a.Syncer.AddModule(token.Module, party.RoleEMSP, true, func(ctx context.Context, p *party.Platform, cc, pid, uid string, raw []byte) (bool, error) {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(raw, &head)
		_, changed, err := a.Tokens.Store(ctx, token.Change{PlatformID: p.ID}, token.Ref{CountryCode: cc, PartyID: pid, UID: uid, Type: head.Type}, raw)
		return changed, err
	})
	a.Syncer.AddModule(session.Module, party.RoleCPO, true, func(ctx context.Context, p *party.Platform, cc, pid, id string, raw []byte) (bool, error) {
		_, changed, err := a.Sessions.Store(ctx, session.Change{Sender: p.ID}, session.Ref{CountryCode: cc, PartyID: pid, ID: id}, raw)
		return changed, err
	})
	a.Syncer.AddModule(cdr.Module, party.RoleCPO, true, func(ctx context.Context, p *party.Platform, cc, pid, id string, raw []byte) (bool, error) {
		var cpos []party.PartyRef
		for _, r := range p.Roles {
			if r.Role == party.RoleCPO {
				cpos = append(cpos, r.PartyRef)
			}
		}
		res, err := a.CDRs.Create(ctx, cdr.Change{CPOs: cpos, Sender: p.ID}, raw)
		return res.Created, err
	})
}
