package console

import (
	"net/http"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// commandStates are the states of a command's lifecycle (command package).
var commandStates = []string{command.StateForwarding, command.StateAccepted, command.StateUnconfirmed, command.StateRejected,
	command.StateFailed, command.StateCompleted, command.StateTimeout}

type commandsView struct {
	Commands []*command.Record
	Pager    ui.Pager
	States   []string
	Types    []string
}

type commandView struct {
	*command.Record
	Request, Forwarded, ResponseBody string
}

// PageTitle names the page after the command.
func (v commandView) PageTitle() string { return ui.TitleCase(v.Command) + " " + v.ID }

func (c *Console) commandPages() ([]ui.Page, []ui.Action) {
	if c.cfg.Commands == nil {
		return nil, nil
	}
	return []ui.Page{
		{
			Path: "/commands", Title: "Commands", Section: "Charging", Nav: "Commands", Template: "commands", Refresh: 10,
			Load: func(r *http.Request) (any, error) {
				q := r.URL.Query()
				f := command.ListFilter{State: q.Get("state"), Command: q.Get("command"), AuthorizationReference: q.Get("authorization_reference"), Limit: 50}
				page, _ := strconv.Atoi(q.Get("page"))
				f.Offset = max(page-1, 0) * f.Limit
				list, total, err := c.cfg.Commands.List(r.Context(), f)
				if err != nil {
					return nil, err
				}
				_, _, pager := ui.OffsetPager(r, int(total), f.Limit)
				return commandsView{Commands: list, Pager: pager, States: commandStates, Types: append(append([]string{}, ocpi.CommandTypes...), ocpi.ProfileGet, ocpi.ProfileSet, ocpi.ProfileClear)}, nil
			},
		},
		{
			Path: "/commands/{id}", Title: "Command", Template: "command",
			Load: func(r *http.Request) (any, error) {
				rec, err := c.cfg.Commands.Get(r.Context(), r.PathValue("id"))
				if err != nil {
					return nil, err
				}
				v := commandView{Record: rec, Request: ui.PrettyJSON(rec.Request)}
				if len(rec.Forwarded) > 0 {
					v.Forwarded = ui.PrettyJSON(rec.Forwarded)
				}
				if rec.Response != nil && len(rec.Response.Body) > 0 {
					v.ResponseBody = ui.PrettyJSON(rec.Response.Body)
				}
				return v, nil
			},
		},
	}, nil
}
