package ids_test

import (
	"regexp"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ids"
)

var v7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestIDsSortInTheOrderMade: every id is a version 7 UUID, and each sorts
// after the one made before it, also when several goroutines make them at
// once (each goroutine's own ids in order, all of them distinct).
func TestIDsSortInTheOrderMade(t *testing.T) {
	const workers, each = 8, 5000
	made := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				made[w] = append(made[w], ids.New())
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for w, list := range made {
		for i, id := range list {
			if !v7.MatchString(id) {
				t.Fatalf("id %q is not a version 7 UUID", id)
			}
			if i > 0 && id <= list[i-1] {
				t.Fatalf("worker %d: id %s made after %s sorts before it", w, id, list[i-1])
			}
			if seen[id] {
				t.Fatalf("id %s made twice", id)
			}
			seen[id] = true
		}
	}
}
