package core

import (
	"bytes"
	"slices"
	"strings"
)

// canonicalOver writes Canonical's result, overlay(received, strict) in
// canonical form, in one walk over strict's bytes (typed's encoding)
// instead of decoding them into a second tree and merging the two into a
// third: the received tree is the only one built. A value of strict is
// copied as it stands when it needs nothing (a number, a literal, a string
// without an escape: encoding/json escapes everything the canonical form
// does, and more). An object's members are written as they come, each
// over the received member it overlays, then the received members strict
// lacks, and the members are put in order by name.
//
// It reports false, and Canonical takes the tree path, for what it does not
// decide the same way: two members of one object in strict with the same
// name, a received member that two strict members would take (which one
// does is the map's order in overlay), and anything strict holds that is
// not plain JSON.
func canonicalOver(strict []byte, received any) ([]byte, bool) {
	w := overlayWriter{p: treeParser{b: strict}, e: treeEncoder{buf: make([]byte, 0, len(strict)+len(strict)/4+64)}}
	w.p.space()
	if !w.value(received, 0) {
		return nil, false
	}
	w.p.space()
	if w.p.i != len(strict) {
		return nil, false
	}
	return w.e.buf, true
}

type overlayWriter struct {
	p treeParser
	e treeEncoder
	// ms holds the members of the objects being written, innermost last.
	ms []member
	// moved holds an object's members while they are put in order.
	moved []byte
}

// member is one member of an object as written: its name and where it
// stands in the output ("name":value, without a comma).
type member struct {
	key        []byte // the name, unescaped
	start, end int
	// exact is true when it overlays the received member of its name;
	// folded when it overlays fold, a received member of its name in
	// another case.
	exact, folded bool
	fold          string
}

// value writes the strict value at w.p.i over received.
func (w *overlayWriter) value(received any, depth int) bool {
	p := &w.p
	if p.i >= len(p.b) || depth > maxTreeDepth {
		return false
	}
	start := p.i
	switch c := p.b[p.i]; {
	case c == '{':
		return w.object(received, depth)
	case c == '[':
		return w.array(received, depth)
	case c == '"':
		if end, plain := unescapedString(p.b, p.i); plain {
			w.e.buf = append(w.e.buf, p.b[start:end]...)
			p.i = end
			return true
		}
		s, ok := p.string()
		if !ok {
			return false
		}
		w.e.string(s)
		return true
	case c == '-' || ('0' <= c && c <= '9'):
		if !p.numberSpan() {
			return false
		}
	case c == 't':
		if !p.literal("true") {
			return false
		}
	case c == 'f':
		if !p.literal("false") {
			return false
		}
	case c == 'n':
		if !p.literal("null") {
			return false
		}
	default:
		return false
	}
	w.e.buf = append(w.e.buf, p.b[start:p.i]...)
	return true
}

// unescapedString reports whether the string opening at i holds no escape
// and no byte below 0x20, and where it ends (after its closing quote).
func unescapedString(b []byte, i int) (end int, plain bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\' || c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

// object writes the strict object at w.p.i over received: overlay's
// merge when received is an object (each strict member over the received
// member of its name, or else of its name in another case; the received
// members no strict member takes kept), strict's object alone otherwise;
// members in order by name.
func (w *overlayWriter) object(received any, depth int) bool {
	p := &w.p
	r, _ := received.(map[string]any)
	base := len(w.ms)
	defer func() { w.ms = w.ms[:base] }()
	p.i++ // {
	w.e.buf = append(w.e.buf, '{')
	body := len(w.e.buf)
	exact, folds := 0, 0
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
	} else {
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return false
			}
			m := member{start: len(w.e.buf)}
			if end, plain := unescapedString(p.b, p.i); plain {
				m.key = p.b[p.i+1 : end-1]
				w.e.buf = append(w.e.buf, p.b[p.i:end]...)
				p.i = end
			} else {
				k, ok := p.string()
				if !ok {
					return false
				}
				m.key = []byte(k)
				w.e.string(k)
			}
			p.space()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return false
			}
			p.i++
			p.space()
			w.e.buf = append(w.e.buf, ':')
			var over any
			if len(r) > 0 {
				if v, ok := r[string(m.key)]; ok {
					over, m.exact = v, true
					exact++
				} else {
					rk, found, sure := matchOne(r, string(m.key))
					if !sure {
						return false
					}
					if found {
						over, m.fold, m.folded = r[rk], rk, true
						folds++
					}
				}
			}
			if !w.value(over, depth+1) {
				return false
			}
			m.end = len(w.e.buf)
			w.ms = append(w.ms, m)
			done, ok := p.after('}')
			if !ok {
				return false
			}
			if done {
				break
			}
		}
	}
	if (folds > 0 || exact < len(r)) && !w.kept(r, base, folds) {
		return false
	}
	if !w.inOrder(base, body) {
		return false
	}
	w.e.buf = append(w.e.buf, '}')
	return true
}

// kept checks what the object's strict members (w.ms[base:]) took of the
// received members r, and writes the received members none took. A
// received member taken twice (by its name and by another in another case,
// or by two in other cases) fails it.
func (w *overlayWriter) kept(r map[string]any, base, folds int) bool {
	ms := w.ms[base:]
	takenExactly := func(k string) bool {
		for _, m := range ms {
			if m.exact && string(m.key) == k {
				return true
			}
		}
		return false
	}
	if folds > 0 {
		for i, m := range ms {
			if !m.folded {
				continue
			}
			if takenExactly(m.fold) {
				return false
			}
			for _, o := range ms[i+1:] {
				if o.folded && o.fold == m.fold {
					return false
				}
			}
		}
	}
	for k, v := range r {
		if takenExactly(k) || slices.ContainsFunc(ms, func(m member) bool { return m.folded && m.fold == k }) {
			continue
		}
		m := member{key: []byte(k), start: len(w.e.buf)}
		w.e.string(k)
		w.e.buf = append(w.e.buf, ':')
		if err := w.e.value(v); err != nil {
			return false
		}
		m.end = len(w.e.buf)
		w.ms = append(w.ms, m)
		ms = w.ms[base:]
	}
	return true
}

// inOrder puts the members of the object written from body (w.ms[base:])
// in order by name, with commas between them. Two members of the same name
// fail it.
func (w *overlayWriter) inOrder(base, body int) bool {
	ms := w.ms[base:]
	if len(ms) == 0 {
		return true
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(ms[i].key, ms[i-1].key) {
			return false
		}
	}
	w.moved = append(w.moved[:0], w.e.buf[body:]...)
	w.e.buf = w.e.buf[:body]
	for i, m := range ms {
		if i > 0 {
			w.e.buf = append(w.e.buf, ',')
		}
		w.e.buf = append(w.e.buf, w.moved[m.start-body:m.end-body]...)
	}
	return true
}

// matchOne finds the received member overlay takes for strict's key k when
// none is named k: the one named k in another case. sure is false when two
// are: overlay would take either, in the map's order.
func matchOne(r map[string]any, k string) (rk string, found, sure bool) {
	for key := range r {
		if !strings.EqualFold(key, k) {
			continue
		}
		if found {
			return "", false, false
		}
		rk, found = key, true
	}
	return rk, found, true
}

// array writes the strict list at w.p.i over received: item by item when
// received is a list of the same length, strict's list alone otherwise.
// Written over a received list that turns out to be of another length, it
// is written again alone.
func (w *overlayWriter) array(received any, depth int) bool {
	p := &w.p
	r, _ := received.([]any)
	at, out := p.i, len(w.e.buf)
	p.i++ // [
	w.e.buf = append(w.e.buf, '[')
	n := 0
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
	} else {
		for ; ; n++ {
			p.space()
			if n > 0 {
				w.e.buf = append(w.e.buf, ',')
			}
			var item any
			if n < len(r) {
				item = r[n]
			}
			if !w.value(item, depth+1) {
				return false
			}
			done, ok := p.after(']')
			if !ok {
				return false
			}
			if done {
				n++
				break
			}
		}
	}
	if r != nil && n != len(r) {
		p.i, w.e.buf = at, w.e.buf[:out]
		return w.array(nil, depth)
	}
	w.e.buf = append(w.e.buf, ']')
	return true
}
