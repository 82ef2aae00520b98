package authguard

// Remembered is the number of clients the guard remembers.
func (g *Guard) Remembered() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen)
}
