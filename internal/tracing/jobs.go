package tracing

import (
	"context"
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// metadataKey is where a job's metadata keeps the traceparent of the span
// that enqueued it.
const metadataKey = "traceparent"

// JobMiddleware returns the job queue's middleware: a job enqueued under a
// span carries it in its metadata, and each attempt of a job is a span,
// the child of that one (or a trace of its own for a job nothing traced
// caused: periodic work, an operator's retry). A nil Tracer returns none.
func (t *Tracer) JobMiddleware() []rivertype.Middleware {
	if t == nil {
		return nil
	}
	return []rivertype.Middleware{&jobMiddleware{t: t}}
}

type jobMiddleware struct {
	river.MiddlewareDefaults
	t *Tracer
}

// InsertMany implements rivertype.JobInsertMiddleware.
func (m *jobMiddleware) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	if span := FromContext(ctx); span != nil {
		tp := span.TraceParent()
		for _, p := range params {
			p.Metadata = withTraceParent(p.Metadata, tp)
		}
	}
	return doInner(ctx)
}

// withTraceParent adds the traceparent to a job's metadata (a JSON
// object), keeping what is there; metadata that is not an object is left
// alone.
func withTraceParent(meta []byte, tp string) []byte {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &m); err != nil || m == nil {
			return meta
		}
	}
	v, _ := json.Marshal(tp)
	m[metadataKey] = v
	out, err := json.Marshal(m)
	if err != nil {
		return meta
	}
	return out
}

// Work implements rivertype.WorkerMiddleware.
func (m *jobMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) (err error) {
	var meta struct {
		TraceParent string `json:"traceparent"`
	}
	_ = json.Unmarshal(job.Metadata, &meta)
	ctx, span := m.t.Continue(ctx, meta.TraceParent, "job "+job.Kind, Consumer)
	if span == nil {
		return doInner(ctx)
	}
	defer span.EndErr(&err)
	span.SetString("job.kind", job.Kind)
	span.SetString("job.queue", job.Queue)
	span.SetInt("job.id", job.ID)
	span.SetInt("job.attempt", int64(job.Attempt))
	// The calls the job makes keep the trace ocpiclient gives them (their
	// own chain's, by correlation id: one job may deliver the pushes of
	// several chains); Transport links them to this span.
	return doInner(ctx)
}
