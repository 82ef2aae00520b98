package cli

import (
	"context"
	"io"
)

// run runs the production command line, as cmd/ocpihub does.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return Program{Name: "ocpihub"}.Run(ctx, args, stdout, stderr, getenv)
}
