package voicetest

// The alignment of golden entries with actual ones, for the failure
// message: which entries were inserted, removed or changed. It is the
// search go-cmp's slice comparison makes (github.com/google/go-cmp
// cmp/internal/diff.Difference, v0.7.0, BSD-3-Clause, Copyright 2017 The Go
// Authors), written again here so that voicetest's non-test code does not
// link go-cmp: go-cmp names types through reflect.Type.Method, which turns
// the linker's dead-method elimination off in every binary that reaches
// voicetest (ours and every user's test binary). The one difference: go-cmp
// starts its search from the front or from the back at random (once per
// process, so that no one relies on its output); this search always starts
// from the front, so a message is the same on every run.
// golden_align_oracle_test.go checks it against go-cmp.

// edit is one step of an edit script turning golden entries into actual
// ones.
type edit uint8

const (
	editSame     edit = iota // the entries are equal
	editRemoved              // a golden entry with no actual one
	editInserted             // an actual entry with no golden one
	editChanged              // a golden entry changed into an actual one
)

// likeness is how alike two entries are: how many of their fields are
// equal and how many differ, counted as go-cmp counts them (an ignored
// field counts as equal).
type likeness struct{ same, diff int }

// equal reports whether the entries are equal.
func (l likeness) equal() bool { return l.diff == 0 }

// similar reports whether an entry can be shown as a change of the other
// rather than as one removed and one inserted (go-cmp's Result.Similar).
func (l likeness) similar() bool { return l.same+1 >= l.diff }

// editScriptFrom aligns nx golden entries with ny actual ones, alike
// telling how entry ix of the golden compares with entry iy of the actual.
// It is greedy, not minimal: a forward search from the start and a
// backward one from the end take turns, each following the first match it
// finds on the diagonal through its frontier, until they meet; the search
// tries at most 4·(nx+ny) pairs that do not match, so its cost is bounded
// for any input. Equal lists give only editSame, others at least one other
// edit. The comparison starts with the forward search; backFirst starts
// with the backward one (the other half of go-cmp's random choice, for the
// oracle test).
func editScriptFrom(nx, ny int, alike func(ix, iy int) likeness, backFirst bool) []edit {
	fwd := alignPath{dir: +1, es: make([]edit, 0, (nx+ny)/2)}
	rev := alignPath{dir: -1, x: nx, y: ny}
	fwdFront := alignPoint{fwd.x, fwd.y}
	revFront := alignPoint{rev.x, rev.y}
	budget := 4 * (nx + ny)
	forward := !backFirst
	for fwdFront.x < revFront.x && fwdFront.y < revFront.y && budget > 0 {
		if forward {
			// Look along the diagonal through the forward frontier,
			// nearest first, for a pair that matches.
			for stop1, stop2, i := false, false, 0; !(stop1 && stop2) && budget > 0; i++ {
				z := zigzag(i)
				px, py := fwdFront.x+z, fwdFront.y-z
				switch {
				case px >= rev.x || py < fwd.y:
					stop1 = true
				case py >= rev.y || px < fwd.x:
					stop2 = true
				case alike(px, py).equal():
					fwd.connect(alignPoint{px, py}, alike)
					fwd.add(editSame)
					for fwd.x < rev.x && fwd.y < rev.y && alike(fwd.x, fwd.y).equal() {
						fwd.add(editSame)
					}
					fwdFront = alignPoint{fwd.x, fwd.y}
					stop1, stop2 = true, true
				default:
					budget--
				}
			}
			if rev.x-fwdFront.x >= rev.y-fwdFront.y {
				fwdFront.x++
			} else {
				fwdFront.y++
			}
		} else {
			for stop1, stop2, i := false, false, 0; !(stop1 && stop2) && budget > 0; i++ {
				z := zigzag(i)
				px, py := revFront.x-z, revFront.y+z
				switch {
				case fwd.x >= px || rev.y < py:
					stop1 = true
				case fwd.y >= py || rev.x < px:
					stop2 = true
				case alike(px-1, py-1).equal():
					rev.connect(alignPoint{px, py}, alike)
					rev.add(editSame)
					for fwd.x < rev.x && fwd.y < rev.y && alike(rev.x-1, rev.y-1).equal() {
						rev.add(editSame)
					}
					revFront = alignPoint{rev.x, rev.y}
					stop1, stop2 = true, true
				default:
					budget--
				}
			}
			if revFront.x-fwd.x >= revFront.y-fwd.y {
				revFront.x--
			} else {
				revFront.y--
			}
		}
		forward = !forward
	}
	// Join the two paths: the forward one, the gap between them, then the
	// backward one from its far end.
	fwd.connect(alignPoint{rev.x, rev.y}, alike)
	for i := len(rev.es) - 1; i >= 0; i-- {
		fwd.add(rev.es[i])
	}
	return fwd.es
}

type alignPoint struct{ x, y int }

// alignPath is a path through the edit graph: from (0,0) forward (dir +1)
// or from (nx,ny) backward (dir -1), its edits in the order taken.
type alignPath struct {
	dir  int
	x, y int
	es   []edit
}

func (p *alignPath) add(e edit) {
	p.es = append(p.es, e)
	switch e {
	case editSame, editChanged:
		p.x += p.dir
		p.y += p.dir
	case editRemoved:
		p.x += p.dir
	case editInserted:
		p.y += p.dir
	}
}

// connect walks p to dst, pairing entries that are alike as changes and
// removing or inserting the others, whichever side has more left.
func (p *alignPath) connect(dst alignPoint, alike func(ix, iy int) likeness) {
	if p.dir > 0 {
		for dst.x > p.x && dst.y > p.y {
			switch l := alike(p.x, p.y); {
			case l.equal():
				p.add(editSame)
			case l.similar():
				p.add(editChanged)
			case dst.x-p.x >= dst.y-p.y:
				p.add(editRemoved)
			default:
				p.add(editInserted)
			}
		}
		for dst.x > p.x {
			p.add(editRemoved)
		}
		for dst.y > p.y {
			p.add(editInserted)
		}
		return
	}
	for p.x > dst.x && p.y > dst.y {
		switch l := alike(p.x-1, p.y-1); {
		case l.equal():
			p.add(editSame)
		case l.similar():
			p.add(editChanged)
		case p.y-dst.y >= p.x-dst.x:
			p.add(editInserted)
		default:
			p.add(editRemoved)
		}
	}
	for p.x > dst.x {
		p.add(editRemoved)
	}
	for p.y > dst.y {
		p.add(editInserted)
	}
}

// zigzag maps 0, 1, 2, 3, 4, ... to 0, -1, +1, -2, +2, ...
func zigzag(i int) int {
	if i&1 != 0 {
		i = ^i
	}
	return i >> 1
}
