package charging

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
)

// The writes and reads of one object its owner pushes and the hub stores
// (a CPO's sessions, an eMSP's tokens) answer alike: readRef reads and
// checks the object's URL, change says who writes, and the answer is the
// hub's own.

// putObject serves a PUT of one object: 201 when it is new, 200 when it
// replaced the stored one.
func putObject[R, C any](k *kit.Kit, w http.ResponseWriter, r *http.Request, readRef func(*http.Request) (R, error), change C,
	put func(context.Context, C, R, []byte) (bool, error)) error {
	ref, raw, err := kit.RefAndBody(r, readRef)
	if err != nil {
		return err
	}
	created, err := put(r.Context(), change, ref, raw)
	if err != nil {
		return err
	}
	k.SetHubRouting(w, r)
	return k.Stored(w, created)
}

// patchObject serves a PATCH of one object.
func patchObject[R, C any](k *kit.Kit, w http.ResponseWriter, r *http.Request, readRef func(*http.Request) (R, error), change C,
	patch func(context.Context, C, R, []byte) error) error {
	ref, raw, err := kit.RefAndBody(r, readRef)
	if err != nil {
		return err
	}
	if err := patch(r.Context(), change, ref, raw); err != nil {
		return err
	}
	k.SetHubRouting(w, r)
	return k.OK(w, nil)
}

// getObject serves a GET of one object: its owner checks the hub's copy.
func getObject[R any](k *kit.Kit, w http.ResponseWriter, r *http.Request, readRef func(*http.Request) (R, error),
	get func(context.Context, R) (json.RawMessage, error)) error {
	ref, err := readRef(r)
	if err != nil {
		return err
	}
	body, err := get(r.Context(), ref)
	if err != nil {
		return err
	}
	k.SetHubRouting(w, r)
	return k.OK(w, body)
}
