package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// failedStates are the states an operator retries from.
var failedStates = []rivertype.JobState{rivertype.JobStateDiscarded, rivertype.JobStateRetryable, rivertype.JobStateCancelled}

type jobsView struct {
	Jobs   []jobRow
	Pager  ui.Pager
	Kinds  []string
	States []string
}

type jobRow struct {
	*rivertype.JobRow
	LastError string
	// When is the moment that matters: the next attempt of a retryable job,
	// when a discarded or cancelled one ended.
	When      time.Time
	WhenLabel string
	Retryable bool
	// State is the job's state as an operator reads it: a failed job that
	// retries within seconds is "retryable", whatever River calls it.
	State string
}

type jobView struct {
	jobRow
	Args string
}

// PageTitle names the page after the job.
func (v jobView) PageTitle() string { return fmt.Sprintf("Job %d · %s", v.ID, ui.TitleCase(v.Kind)) }

func (c *Console) jobPages() ([]ui.Page, []ui.Action) {
	return []ui.Page{
			{
				Path: "/jobs", Title: "Failed jobs", Section: "Operations", Nav: "Failed jobs", Template: "jobs", Refresh: 15,
				Load: func(r *http.Request) (any, error) {
					q := r.URL.Query()
					states := failedStates
					if st := q.Get("state"); st != "" {
						if !slices.Contains(failedStates, rivertype.JobState(st)) {
							return nil, ocpi.Invalid("state", "must be discarded, retryable or cancelled")
						}
						states = []rivertype.JobState{rivertype.JobState(st)}
					}
					p := jobs.ListParams{States: states, Limit: 26}
					if k := q.Get("kind"); k != "" {
						p.Kinds = []string{k}
					}
					if a := q.Get("after"); a != "" {
						n, err := strconv.ParseInt(a, 10, 64)
						if err != nil || n <= 0 {
							return nil, ocpi.Invalid("after", "must be a job id")
						}
						p.After = n
					}
					list, err := c.cfg.Jobs.List(r.Context(), p)
					if err != nil {
						return nil, err
					}
					more := len(list) > 25
					if more {
						list = list[:25]
					}
					if p.After == 0 && slices.Contains(states, rivertype.JobStateRetryable) {
						soon, err := c.retryingSoon(r.Context(), p.Kinds)
						if err != nil {
							return nil, err
						}
						list = append(soon, list...)
					}
					kinds, err := c.cfg.Jobs.Kinds(r.Context(), slices.Concat(failedStates, []rivertype.JobState{rivertype.JobStateAvailable})...)
					if err != nil {
						return nil, err
					}
					v := jobsView{Kinds: kinds, States: []string{"discarded", "retryable", "cancelled"}}
					var last int64
					for _, j := range list {
						v.Jobs = append(v.Jobs, c.jobRow(j))
						last = j.ID
					}
					v.Pager = ui.KeysetPager(r, len(list), last, more)
					return v, nil
				},
			},
			{
				Path: "/jobs/{id}", Title: "Job", Template: "job",
				Load: func(r *http.Request) (any, error) {
					j, err := c.job(r)
					if err != nil {
						return nil, err
					}
					return jobView{jobRow: c.jobRow(j), Args: ui.PrettyJSON(j.EncodedArgs)}, nil
				},
			},
		}, []ui.Action{{
			Path: "/jobs/{id}/retry",
			Do: func(r *http.Request) (ui.Result, error) {
				j, err := c.job(r)
				if err != nil {
					return ui.Result{Redirect: "/jobs"}, err
				}
				back := "/jobs/" + strconv.FormatInt(j.ID, 10)
				// Only failed jobs are retried from here: a completed job run
				// again would repeat its effect, a running one is already
				// being worked.
				if !c.jobRow(j).Retryable {
					return ui.Result{Redirect: back}, ocpi.Errorf(ocpi.EINVALID, "job %d is %s; only failed jobs are retried", j.ID, j.State)
				}
				if _, err := c.cfg.Jobs.Retry(r.Context(), j.ID); err != nil {
					return ui.Result{Redirect: back}, err
				}
				c.logger.InfoContext(r.Context(), "console: job retried", "job_id", j.ID, "kind", j.Kind)
				return ui.Result{Redirect: back, Flash: fmt.Sprintf("Job %d (%s) will run again now.", j.ID, ui.TitleCase(j.Kind))}, nil
			},
		}}
}

// retryingSoon returns the jobs that failed and retry within seconds: River
// keeps those "available" (with a scheduled_at a few seconds on) rather than
// "retryable". They lead the first page of failed jobs.
func (c *Console) retryingSoon(ctx context.Context, kinds []string) ([]*rivertype.JobRow, error) {
	avail, err := c.cfg.Jobs.List(ctx, jobs.ListParams{States: []rivertype.JobState{rivertype.JobStateAvailable}, Kinds: kinds, Limit: 200})
	if err != nil {
		return nil, err
	}
	var out []*rivertype.JobRow
	for _, j := range avail {
		if len(j.Errors) > 0 {
			out = append(out, j)
		}
	}
	return out, nil
}

func (c *Console) job(r *http.Request) (*rivertype.JobRow, error) {
	id, err := ui.PathInt(r, "id")
	if err != nil {
		return nil, err
	}
	j, err := c.cfg.Jobs.Get(r.Context(), id)
	if errors.Is(err, river.ErrNotFound) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("job %d not found (finished jobs are kept for a day)", id)}
	}
	return j, err
}

func (c *Console) jobRow(j *rivertype.JobRow) jobRow {
	row := jobRow{JobRow: j, State: string(j.State)}
	if n := len(j.Errors); n > 0 {
		row.LastError = j.Errors[n-1].Error
	}
	switch {
	case j.State == rivertype.JobStateRetryable || (j.State == rivertype.JobStateAvailable && len(j.Errors) > 0):
		row.When, row.WhenLabel = j.ScheduledAt, "next attempt"
		if len(j.Errors) > 0 {
			row.State = string(rivertype.JobStateRetryable)
		}
	case j.FinalizedAt != nil:
		row.When, row.WhenLabel = *j.FinalizedAt, string(j.State)
	case j.AttemptedAt != nil:
		row.When, row.WhenLabel = *j.AttemptedAt, "last attempt"
	default:
		row.When, row.WhenLabel = j.CreatedAt, "created"
	}
	row.Retryable = slices.Contains(failedStates, j.State) || (j.State == rivertype.JobStateAvailable && len(j.Errors) > 0)
	return row
}
