package wire

import (
	"errors"
	"fmt"
)

// CheckDTMF validates key presses: at least one, each a DTMF key.
func CheckDTMF(digits string) error {
	if digits == "" {
		return errors.New(`SendDTMF with no digits; pass key presses such as "1" or "42#"`)
	}
	for _, d := range digits {
		if !ValidDTMF(d) {
			return fmt.Errorf("SendDTMF: %q is not a DTMF key; use 0-9, *, # or A-D", d)
		}
	}
	return nil
}

// ValidDTMF reports whether d is a DTMF key: 0-9, *, # or A-D.
func ValidDTMF(d rune) bool {
	return '0' <= d && d <= '9' || d == '*' || d == '#' || 'A' <= d && d <= 'D'
}
