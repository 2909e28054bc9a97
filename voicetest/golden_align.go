package voicetest

// The alignment of golden entries with actual ones, for a failure
// message: which entries were removed, inserted or changed. voicetest
// used go-cmp for this; go-cmp names types through reflect.Type.Method,
// which turns the linker's dead-method elimination off in every binary
// that reaches voicetest (ours and every user's test binary), so the
// alignment is our own: the most equal entries kept in order (a longest
// common subsequence), and between two kept pairs the others paired as
// changed while they are alike. golden_align_oracle_test.go checks it
// against go-cmp in test code.

// edit is one step of an edit script turning golden entries into actual
// ones.
type edit uint8

const (
	editSame     edit = iota // the entries are equal
	editRemoved              // a golden entry with no actual one
	editInserted             // an actual entry with no golden one
	editChanged              // a golden entry changed into an actual one
)

// likeness is how alike two entries are: how many of the fields the
// comparison looks at are equal and how many differ.
type likeness struct{ same, diff int }

// equal reports whether the entries are equal.
func (l likeness) equal() bool { return l.diff == 0 }

// similar reports whether an entry is worth showing as a change of the
// other rather than as one removed and one inserted: no more than one
// field differs beyond the fields that are equal.
func (l likeness) similar() bool { return l.same+1 >= l.diff }

// maxAlignCells bounds the table editScript fills: past it (both lists
// long and different over more than ~1000 entries each once their
// common ends are set aside), the middle is reported as one run of
// changes, paired in order, instead of aligned.
const maxAlignCells = 1 << 20

// editScript aligns nx golden entries with ny actual ones, alike telling
// how entry ix of the golden compares with entry iy of the actual. Equal
// lists give only editSame; any difference gives at least one other edit.
// The script keeps as many equal pairs as possible (when the differing
// middle fits maxAlignCells); for the same number it removes before it
// inserts, so a report is the same on every run. Its cost is
// O(nx+ny) comparisons for lists that differ only near one place, and at
// most maxAlignCells comparisons and 2·maxAlignCells bytes otherwise.
func editScript(nx, ny int, alike func(ix, iy int) likeness) []edit {
	es := make([]edit, 0, max(nx, ny))
	// Common front and back.
	lo := 0
	for lo < nx && lo < ny && alike(lo, lo).equal() {
		lo++
	}
	hx, hy := nx, ny
	for hx > lo && hy > lo && alike(hx-1, hy-1).equal() {
		hx, hy = hx-1, hy-1
	}
	for range lo {
		es = append(es, editSame)
	}
	es = alignMiddle(es, lo, hx, lo, hy, alike)
	for range nx - hx {
		es = append(es, editSame)
	}
	return es
}

// alignMiddle appends the script for golden entries [x0,x1) and actual
// entries [y0,y1).
func alignMiddle(es []edit, x0, x1, y0, y1 int, alike func(ix, iy int) likeness) []edit {
	m, n := x1-x0, y1-y0
	if m == 0 || n == 0 || m*n > maxAlignCells {
		return pairGap(es, x0, x1, y0, y1, alike)
	}
	// keep[i*(n+1)+j]: how many equal pairs the best alignment of golden
	// [x0+i,x1) with actual [y0+j,y1) keeps. Within the bound, min(m,n)
	// is at most 1024, so uint16 holds it.
	w := n + 1
	keep := make([]uint16, (m+1)*w)
	eq := make([]bool, m*n)
	for i := m - 1; i >= 0; i-- {
		for j := n - 1; j >= 0; j-- {
			k := i*w + j
			if alike(x0+i, y0+j).equal() {
				eq[i*n+j] = true
				keep[k] = keep[k+w+1] + 1
			} else {
				keep[k] = max(keep[k+w], keep[k+1])
			}
		}
	}
	// Walk from the front: take an equal pair (a common subsequence that
	// skips one of two equal entries is never longer than one that keeps
	// them); otherwise remove while that loses nothing, else insert.
	// Entries between two kept pairs form a gap, paired by pairGap.
	i, j := 0, 0
	gi, gj := 0, 0
	for i < m && j < n {
		k := i*w + j
		switch {
		case eq[i*n+j]:
			es = pairGap(es, x0+gi, x0+i, y0+gj, y0+j, alike)
			es = append(es, editSame)
			i, j = i+1, j+1
			gi, gj = i, j
		case keep[k+w] >= keep[k+1]:
			i++
		default:
			j++
		}
	}
	return pairGap(es, x0+gi, x1, y0+gj, y1, alike)
}

// pairGap appends the script for a gap: golden entries [x0,x1) and actual
// entries [y0,y1) with no equal pair kept between them. Taken in order,
// two entries that are alike are shown as one changed; otherwise the side
// with more entries left gives one up (removed, or inserted).
func pairGap(es []edit, x0, x1, y0, y1 int, alike func(ix, iy int) likeness) []edit {
	x, y := x0, y0
	for x < x1 && y < y1 {
		switch {
		case alike(x, y).similar():
			es = append(es, editChanged)
			x, y = x+1, y+1
		case x1-x >= y1-y:
			es = append(es, editRemoved)
			x++
		default:
			es = append(es, editInserted)
			y++
		}
	}
	for ; x < x1; x++ {
		es = append(es, editRemoved)
	}
	for ; y < y1; y++ {
		es = append(es, editInserted)
	}
	return es
}
