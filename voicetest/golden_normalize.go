package voicetest

import (
	"strconv"
	"strings"
	"unicode"
)

// NormalizeText returns s in a canonical form for comparing speech that
// went through speech-to-text, which is not exact: it lowercases, drops
// apostrophes ("don't" → "dont"), turns other punctuation into spaces,
// collapses runs of white space, and writes English numbers in digits, so
// that "Twenty-one", "twenty one" and "21" all become "21".
//
// Numbers: cardinals up to the billions ("one hundred and five" → "105",
// "a thousand" → "1000", "two thousand twenty four" → "2024"), ordinals
// ("twenty first" → "21st", "21st" stays), decimals ("three point five" →
// "3.5", "3.5" stays) and thousands separators ("1,000" → "1000"). "%"
// becomes "percent" and "&" becomes "and". Numbers spoken in pairs stay
// separate numbers: "seven thirty" → "7 30", which is also what "7:30"
// becomes, but "nineteen eighty four" → "19 84", which differs from
// "1984". Words that are not numbers are kept as they are, so homophones
// ("for" and "four", "to" and "two") still differ.
func NormalizeText(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '\'' || r == '’' || r == 'ʼ':
			// drop: "don't" → "dont"
		case r == '%':
			b.WriteString(" percent ")
		case r == '&':
			b.WriteString(" and ")
		case (r == ',' || r == '.') && i > 0 && i+1 < len(rs) && isDigit(rs[i-1]) && isDigit(rs[i+1]):
			if r == '.' {
				b.WriteRune('.') // a decimal point
			}
			// a thousands separator is dropped: "1,000" → "1000"
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); {
		if n, used := parseNumber(words[i:]); used > 0 {
			out = append(out, n)
			i += used
			continue
		}
		out = append(out, words[i])
		i++
	}
	return strings.Join(out, " ")
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// numberWord is what an English number word contributes.
type numberWord struct {
	kind    numKind
	value   int64
	ordinal bool
}

type numKind uint8

const (
	numZero numKind = iota + 1
	numUnit         // 1–9
	numTeen         // 10–19
	numTens         // 20, 30, … 90
	numHundred
	numScale // thousand, million, billion
)

var numberWords = func() map[string]numberWord {
	m := map[string]numberWord{"zero": {kind: numZero}}
	units := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	unitOrd := []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"}
	for i, w := range units {
		m[w] = numberWord{kind: numUnit, value: int64(i + 1)}
		m[unitOrd[i]] = numberWord{kind: numUnit, value: int64(i + 1), ordinal: true}
	}
	teens := []string{"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	teenOrd := []string{"tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth"}
	for i, w := range teens {
		m[w] = numberWord{kind: numTeen, value: int64(10 + i)}
		m[teenOrd[i]] = numberWord{kind: numTeen, value: int64(10 + i), ordinal: true}
	}
	tens := []string{"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	tensOrd := []string{"twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"}
	for i, w := range tens {
		m[w] = numberWord{kind: numTens, value: int64(20 + 10*i)}
		m[tensOrd[i]] = numberWord{kind: numTens, value: int64(20 + 10*i), ordinal: true}
	}
	m["hundred"] = numberWord{kind: numHundred, value: 100}
	m["hundredth"] = numberWord{kind: numHundred, value: 100, ordinal: true}
	for w, v := range map[string]int64{"thousand": 1e3, "million": 1e6, "billion": 1e9} {
		m[w] = numberWord{kind: numScale, value: v}
		m[w+"th"] = numberWord{kind: numScale, value: v, ordinal: true}
	}
	return m
}()

// digitWords are the words "point" may be followed by.
var digitWords = map[string]byte{"zero": '0', "oh": '0', "one": '1', "two": '2', "three": '3', "four": '4',
	"five": '5', "six": '6', "seven": '7', "eight": '8', "nine": '9'}

// parseNumber reads the longest English number at the start of words and
// returns it in digits with the number of words it used; 0 words when
// words does not start with a number word.
func parseNumber(words []string) (string, int) {
	var (
		total, group int64
		last         numKind
		lastScale    int64 = 1 << 62
		used         int
		ordinal      bool
		started      bool
	)
	// add reads one number word; it reports false when w cannot continue
	// the number read so far.
	add := func(nw numberWord) bool {
		switch nw.kind {
		case numZero:
			if started {
				return false
			}
			last = numZero
		case numUnit:
			if started && last != numTens && last != numHundred && last != numScale {
				return false
			}
			group += nw.value
		case numTeen, numTens:
			if started && last != numHundred && last != numScale {
				return false
			}
			group += nw.value
		case numHundred:
			if group <= 0 || group >= 100 || (last != numUnit && last != numTeen && last != numTens) {
				return false
			}
			group *= 100
		case numScale:
			if group <= 0 || nw.value >= lastScale {
				return false
			}
			total += group * nw.value
			group = 0
			lastScale = nw.value
		}
		last = nw.kind
		started = true
		return true
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		nw, ok := numberWords[w]
		if !ok {
			switch {
			case w == "a" && !started && i+1 < len(words) &&
				(numberWords[words[i+1]].kind == numHundred || numberWords[words[i+1]].kind == numScale):
				// "a hundred", "a thousand"
				group, last, started = 1, numUnit, true
				used = i + 1
				continue
			case w == "and" && (last == numHundred || last == numScale) && i+1 < len(words):
				if next, ok := numberWords[words[i+1]]; ok && (next.kind == numUnit || next.kind == numTeen || next.kind == numTens) {
					continue // "one hundred and five"
				}
			}
			break
		}
		if !add(nw) {
			break
		}
		used = i + 1
		if nw.ordinal || nw.kind == numZero {
			ordinal = nw.ordinal
			break
		}
	}
	if used == 0 {
		return "", 0
	}
	n := total + group
	s := strconv.FormatInt(n, 10)
	if ordinal {
		return s + ordinalSuffix(n), used
	}
	// "three point one four" → "3.14"
	if used+1 < len(words) && words[used] == "point" {
		var frac []byte
		j := used + 1
		for ; j < len(words); j++ {
			d, ok := digitWords[words[j]]
			if !ok {
				break
			}
			frac = append(frac, d)
		}
		if len(frac) > 0 {
			return s + "." + string(frac), j
		}
	}
	return s, used
}

func ordinalSuffix(n int64) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}
