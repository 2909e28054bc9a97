package judges

import (
	"slices"
	"strings"
	"unicode"
)

// numberWord returns the digits of the number words STT engines write
// either way. Only single words: "twenty one" stays two words.
func numberWord(w string) (string, bool) {
	switch w {
	case "zero":
		return "0", true
	case "one":
		return "1", true
	case "two":
		return "2", true
	case "three":
		return "3", true
	case "four":
		return "4", true
	case "five":
		return "5", true
	case "six":
		return "6", true
	case "seven":
		return "7", true
	case "eight":
		return "8", true
	case "nine":
		return "9", true
	case "ten":
		return "10", true
	case "eleven":
		return "11", true
	case "twelve":
		return "12", true
	case "thirteen":
		return "13", true
	case "fourteen":
		return "14", true
	case "fifteen":
		return "15", true
	case "sixteen":
		return "16", true
	case "seventeen":
		return "17", true
	case "eighteen":
		return "18", true
	case "nineteen":
		return "19", true
	case "twenty":
		return "20", true
	case "thirty":
		return "30", true
	case "forty":
		return "40", true
	case "fifty":
		return "50", true
	case "sixty":
		return "60", true
	case "seventy":
		return "70", true
	case "eighty":
		return "80", true
	case "ninety":
		return "90", true
	}
	return "", false
}

// normalize lower-cases s, drops apostrophes (so "don't" is "dont"), turns
// every other character that is not a letter or digit into a space, maps
// number words to digits, and joins the words with single spaces.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '\'' || r == '’':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	for i, w := range words {
		if d, ok := numberWord(w); ok {
			words[i] = d
		}
	}
	return strings.Join(words, " ")
}

// containsWords reports whether the normalised text contains the
// normalised phrase as whole words.
func containsWords(text, phrase string) bool {
	return strings.Contains(" "+text+" ", " "+phrase+" ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
