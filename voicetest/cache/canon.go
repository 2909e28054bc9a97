package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendCanonical appends the canonical JSON encoding of v to dst.
//
// The encoding is deterministic: object keys are sorted by their bytes,
// numbers are normalised (1.0 and 1 encode as 1, 0.7 as 0.7, exponents only
// outside [1e-6, 1e21) like ECMAScript), strings are written without HTML
// escaping, and there is no insignificant white space. Values that are not
// plain JSON trees (structs, typed maps and slices) are first marshalled
// with encoding/json and then re-encoded canonically, so a struct and the
// equivalent map[string]any give the same bytes.
func appendCanonical(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		return appendString(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		return appendFloat(dst, x, 64)
	case float32:
		return appendFloat(dst, float64(x), 32)
	case json.Number:
		return appendNumber(dst, string(x))
	case json.RawMessage:
		tree, err := decodeTree(x)
		if err != nil {
			return dst, err
		}
		return appendCanonical(dst, tree)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, e); err != nil {
				return dst, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return append(dst, ']'), nil
	case []string:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, e)
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendCanonical(dst, x[k]); err != nil {
				return dst, fmt.Errorf("%s: %w", k, err)
			}
		}
		return append(dst, '}'), nil
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, x[k])
		}
		return append(dst, '}'), nil
	}
	// Anything else: let encoding/json define its JSON form, then
	// canonicalise that. Catch NaN and infinities with a clear error first.
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Float32 || rv.Kind() == reflect.Float64 {
		return appendFloat(dst, rv.Float(), rv.Type().Bits())
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return dst, fmt.Errorf("value of type %T cannot be encoded as JSON: %w", v, err)
	}
	tree, err := decodeTree(raw)
	if err != nil {
		return dst, err
	}
	return appendCanonical(dst, tree)
}

// canonical returns the canonical JSON encoding of v.
func canonical(v any) ([]byte, error) {
	return appendCanonical(nil, v)
}

// decodeTree decodes JSON into a tree of map[string]any, []any, string,
// bool, nil and json.Number, rejecting trailing data.
func decodeTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("invalid JSON: data after the first value: %q", preview(string(rest), 20))
	}
	return v, nil
}

// appendFloat appends f in canonical form: integral values as integers,
// others in the shortest form that round-trips at the given bit size, with
// an exponent only when the magnitude is below 1e-6 or at least 1e21.
func appendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("number %v has no JSON encoding", f)
	}
	if f == 0 {
		return append(dst, '0'), nil // also folds -0 into 0
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// Drop the exponent's leading zero: 1e-07 → 1e-7, as ECMAScript.
		if n := len(dst); n-start >= 4 && dst[n-4] == 'e' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendNumber appends the canonical form of a JSON number literal. Integer
// literals are kept exactly (without leading zeros or a negative zero), so
// large ids do not lose precision; other literals go through float64.
func appendNumber(dst []byte, lit string) ([]byte, error) {
	if lit == "" {
		return dst, fmt.Errorf("empty JSON number")
	}
	if isIntLiteral(lit) {
		neg := lit[0] == '-'
		digits := strings.TrimLeft(strings.TrimPrefix(lit, "-"), "0")
		if digits == "" {
			return append(dst, '0'), nil
		}
		if neg {
			dst = append(dst, '-')
		}
		return append(dst, digits...), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return dst, fmt.Errorf("invalid JSON number %q: %w", lit, err)
	}
	return appendFloat(dst, f, 64)
}

func isIntLiteral(s string) bool {
	if s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Only '"', '\\' and control
// characters are escaped; '<', '>' and '&' are kept as they are. Invalid
// UTF-8 is replaced by U+FFFD, as encoding/json does.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid in JSON; escape them anyway, as
		// encoding/json does, so entries are safe to paste into JavaScript.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
