package console

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	sessionsvc "github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/upi"
)

// Card is one figure on the overview: a count with a link to the page that
// explains it. Tone colours it when it needs attention.
type Card struct {
	Label string
	Value string
	Note  string
	Href  string
	Tone  string
	// Links, when set, replace Href: a figure that adds up several lists
	// links to each (a card holding links is not itself a link).
	Links []CardLink
}

// CardLink is one of a card's links: "2 UPI" to the list of those two.
type CardLink struct {
	Label, Href string
}

// Problem is a recent thing an operator should look at.
type Problem struct {
	What   string
	Detail string
	At     time.Time
	Href   string
	Tone   string
}

type overviewView struct {
	Cards    []Card
	Health   []healthItem
	Problems []Problem
	Jobs     ui.ChartView
}

type healthItem struct {
	Label, Value, Tone string
}

func (c *Console) overviewPages() ([]ui.Page, []ui.Action) {
	return []ui.Page{{
		Path: "/{$}", Title: "Overview", Section: "", Nav: "Overview", Template: "overview", Refresh: 30,
		Load: func(r *http.Request) (any, error) { return c.overview(r.Context()) },
	}}, nil
}

func (c *Console) overview(ctx context.Context) (*overviewView, error) {
	v := &overviewView{}
	platforms, err := c.cfg.Parties.List(ctx, party.Filter{})
	if err != nil {
		return nil, err
	}
	var connected, offline, suspended, pending int
	for _, p := range platforms {
		switch p.Status {
		case party.StatusConnected:
			connected++
			// What the registration tolerated (party/lenient.go): an empty
			// business name, a push-only CPO.
			for _, w := range p.Warnings {
				v.Problems = append(v.Problems, Problem{What: p.Name + ": registration warning", Detail: w,
					Href: "/parties/" + strconv.FormatInt(p.ID, 10), Tone: "muted"})
			}
			if p.Connection == party.ClientOffline {
				offline++
				v.Problems = append(v.Problems, Problem{What: p.Name + " is offline", Detail: p.LastError, At: lastSeen(p),
					Href: "/parties/" + strconv.FormatInt(p.ID, 10), Tone: "bad"})
			}
		case party.StatusSuspended:
			suspended++
		case party.StatusPending:
			pending++
		}
	}
	failing, err := c.failingReceivers(ctx, platforms, v)
	if err != nil {
		return nil, err
	}
	invs, err := c.cfg.Parties.Invitations(ctx, 200)
	if err != nil {
		return nil, err
	}
	open := 0
	for _, inv := range invs {
		if inv.State == party.InvitationOpen {
			open++
		}
	}
	counts, err := c.cfg.Jobs.Counts(ctx)
	if err != nil {
		return nil, err
	}
	soon, err := c.retryingSoon(ctx, nil)
	if err != nil {
		return nil, err
	}
	failed := counts[rivertype.JobStateDiscarded] + counts[rivertype.JobStateRetryable] + counts[rivertype.JobStateCancelled] + int64(len(soon))
	queued := counts[rivertype.JobStateAvailable] + counts[rivertype.JobStateRunning] + counts[rivertype.JobStateScheduled]

	v.Cards = []Card{
		{Label: "Connected platforms", Value: strconv.Itoa(connected), Note: strconv.Itoa(len(platforms)) + " registered", Href: "/parties?status=CONNECTED", Tone: "ok"},
		{Label: "Offline", Value: strconv.Itoa(offline), Note: "not answering the liveness check", Href: "/parties?connection=OFFLINE", Tone: attention(offline, "bad")},
		{Label: "Failing receivers", Value: strconv.Itoa(failing), Note: "pushes to them keep failing", Href: "/parties?health=DEGRADED", Tone: attention(failing, "bad")},
		{Label: "Suspended", Value: strconv.Itoa(suspended), Note: "by the operator", Href: "/parties?status=SUSPENDED", Tone: attention(suspended, "warn")},
		{Label: "Open invitations", Value: strconv.Itoa(open), Note: "token A not used yet", Href: "/invitations", Tone: "muted"},
		{Label: "Failed jobs", Value: ui.Thousands(failed), Note: "waiting for a retry or given up", Href: "/jobs", Tone: attention(int(failed), "bad")},
		{Label: "Queued jobs", Value: ui.Thousands(queued), Note: "available, running or scheduled", Tone: "muted"},
	}
	cards, err := c.overviewCards(ctx)
	if err != nil {
		return nil, err
	}
	v.Cards = append(v.Cards, cards...)

	// Health: what /readyz checks, and the build.
	cur, latest, err := c.cfg.DB.MigrationStatus(ctx)
	dbTone, dbValue := "ok", string(c.cfg.DB.Engine())+" · schema "+strconv.FormatInt(cur, 10)
	if err != nil {
		dbTone, dbValue = "bad", "unreachable: "+err.Error()
	} else if cur < latest {
		dbTone, dbValue = "warn", dbValue+" (latest "+strconv.FormatInt(latest, 10)+": migrations pending)"
	}
	v.Health = []healthItem{
		{Label: "Database", Value: dbValue, Tone: dbTone},
		{Label: "Job queue", Value: ui.Thousands(queued) + " queued · " + ui.Thousands(counts[rivertype.JobStateCompleted]) + " completed in the last day", Tone: "ok"},
		tokensAtRest(c.cfg.Unencrypted),
		{Label: "Version", Value: c.cfg.Version, Tone: "muted"},
		{Label: "Console up since", Value: ui.AbsTime(c.started), Tone: "muted"},
	}

	// Recent failed jobs.
	jobs, err := c.cfg.Jobs.Failed(ctx, 5)
	if err != nil {
		return nil, err
	}
	for _, j := range append(soon, jobs...) {
		row := c.jobRow(j)
		p := Problem{What: ui.TitleCase(j.Kind) + " job " + row.State, Href: "/jobs/" + strconv.FormatInt(j.ID, 10), Tone: ui.Tone(row.State), At: j.CreatedAt}
		if n := len(j.Errors); n > 0 {
			p.Detail, p.At = j.Errors[n-1].Error, j.Errors[n-1].At
		}
		v.Problems = append(v.Problems, p)
	}
	sort.SliceStable(v.Problems, func(i, j int) bool { return v.Problems[i].At.After(v.Problems[j].At) })

	states := []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateScheduled,
		rivertype.JobStateRetryable, rivertype.JobStateCompleted, rivertype.JobStateDiscarded, rivertype.JobStateCancelled}
	ch := ui.Chart{Title: "Jobs by state", Series: []ui.Series{{Name: "Jobs"}}, Height: 180}
	for _, s := range states {
		ch.Labels = append(ch.Labels, string(s))
		ch.Series[0].Values = append(ch.Series[0].Values, counts[s])
	}
	v.Jobs = ch.View()
	return v, nil
}

// overviewCards are the modules' figures on the overview: a module adds its
// block here (active sessions, payments needing attention, failed webhook
// deliveries…).
func (c *Console) overviewCards(ctx context.Context) ([]Card, error) {
	var out []Card
	if c.cfg.Locations != nil {
		counts, err := c.cfg.Locations.EVSEStatusCounts(ctx)
		if err != nil {
			return nil, err
		}
		var total int64
		for st, n := range counts {
			if st != "REMOVED" {
				total += n
			}
		}
		broken := counts["OUTOFORDER"] + counts["INOPERATIVE"]
		out = append(out,
			Card{Label: "EVSEs available", Value: ui.Thousands(counts["AVAILABLE"]), Note: "of " + ui.Thousands(total) + " in the directory", Href: "/directory?status=AVAILABLE", Tone: "ok"},
			Card{Label: "EVSEs out of order", Value: ui.Thousands(broken), Note: "out of order or inoperative", Href: "/directory?status=OUTOFORDER", Tone: attention(int(broken), "warn")})
	}
	if c.cfg.Sessions != nil {
		_, active, err := c.cfg.Sessions.Browse(ctx, sessionsvc.BrowseFilter{Status: "ACTIVE", Limit: 1})
		if err != nil {
			return nil, err
		}
		out = append(out, Card{Label: "Active sessions", Value: ui.Thousands(active), Note: "charging now", Href: "/sessions?status=ACTIVE", Tone: attention(int(active), "active")})
	}
	if card, ok, err := c.paymentsAttentionCard(ctx); err != nil {
		return nil, err
	} else if ok {
		out = append(out, card)
	}
	return out, nil
}

// paymentsAttentionCard adds up what the operator must act on in payments:
// UPI payments flagged for attention (not resolved) and Direct Payment
// confirmations flagged (not resolved), with a link to each list. ok is
// false when the hub has neither module.
func (c *Console) paymentsAttentionCard(ctx context.Context) (card Card, ok bool, err error) {
	if c.cfg.UPI == nil && c.cfg.Payments == nil {
		return Card{}, false, nil
	}
	var total int64
	card = Card{Label: "Payments needing attention"}
	if c.cfg.UPI != nil {
		_, page, err := c.cfg.UPI.ListPayments(ctx, upi.PaymentFilter{Attention: true}, ocpi.PageRequest{Limit: 0})
		if err != nil {
			return Card{}, false, err
		}
		total += page.Total
		card.Links = append(card.Links, CardLink{Label: ui.Thousands(page.Total) + " UPI", Href: "/payments/attention"})
	}
	if c.cfg.Payments != nil {
		_, flagged, err := c.cfg.Payments.Flagged(ctx, 1, 0)
		if err != nil {
			return Card{}, false, err
		}
		total += flagged
		card.Links = append(card.Links, CardLink{Label: ui.Thousands(flagged) + " Direct Payment", Href: "/direct-payments"})
	}
	card.Value, card.Tone = ui.Thousands(total), attention(int(total), "bad")
	return card, true, nil
}

// attention returns tone when n > 0, else "muted".
func attention(n int, tone string) string {
	if n > 0 {
		return tone
	}
	return "muted"
}

func lastSeen(p *party.Platform) time.Time {
	if p.LastSeenAt != nil {
		return p.LastSeenAt.Time
	}
	return p.UpdatedAt.Time
}
