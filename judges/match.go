package judges

import (
	"slices"
	"strings"
)

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
