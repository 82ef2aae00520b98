package store_test

import (
	"fmt"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	var args store.Args
	cond := "a = " + args.Add("x") + " AND b = " + args.Add(2)
	if cond != "a = $1 AND b = $2" || fmt.Sprint([]any(args)) != "[x 2]" {
		t.Fatalf("cond %q, args %v", cond, args)
	}
}

func TestPageLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, def, want int }{
		{0, 50, 50}, {-1, 50, 50}, {1, 50, 1}, {500, 50, 500}, {501, 50, 50}, {501, 100, 100},
	} {
		if got := store.PageLimit(tt.in, tt.def); got != tt.want {
			t.Errorf("PageLimit(%d, %d) = %d, want %d", tt.in, tt.def, got, tt.want)
		}
	}
}
