package scrub

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errSyntax is what the scanner reports for input that is not JSON.
var errSyntax = errors.New("scrub: not JSON")

// member is a scalar member of a JSON object: its key (raw, without the
// quotes) and the byte range of its value.
type member struct {
	key        []byte
	start, end int
	kind       byte // '"' string, '0' number, 't' true/false/null
}

// scanMembers calls visit for every scalar member of every object in the
// JSON text b, in order. It keeps an explicit stack, so nesting depth
// costs memory, not goroutine stack. Input that is not JSON is errSyntax;
// the caller checks json.Valid first when it needs a full validation.
func scanMembers(b []byte, visit func(m member)) error {
	var stack []byte // '{' or '['
	pos := skipSpace(b, 0)
	for {
		// A value at pos. In an object, a key comes first.
		var key []byte
		if len(stack) > 0 && stack[len(stack)-1] == '{' {
			if pos >= len(b) || b[pos] != '"' {
				return errSyntax
			}
			end, err := scanString(b, pos)
			if err != nil {
				return err
			}
			key = b[pos+1 : end-1]
			pos = skipSpace(b, end)
			if pos >= len(b) || b[pos] != ':' {
				return errSyntax
			}
			pos = skipSpace(b, pos+1)
		}
		if pos >= len(b) {
			return errSyntax
		}
		switch c := b[pos]; {
		case c == '{' || c == '[':
			stack = append(stack, c)
			pos = skipSpace(b, pos+1)
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			if pos < len(b) && b[pos] == close {
				stack = stack[:len(stack)-1]
				pos++
				break
			}
			continue // the first element or member
		case c == '"':
			end, err := scanString(b, pos)
			if err != nil {
				return err
			}
			if key != nil {
				visit(member{key: key, start: pos, end: end, kind: '"'})
			}
			pos = end
		case c == '-' || c >= '0' && c <= '9':
			end := pos + 1
			for end < len(b) && bytes.IndexByte([]byte("0123456789+-.eE"), b[end]) >= 0 {
				end++
			}
			if key != nil {
				visit(member{key: key, start: pos, end: end, kind: '0'})
			}
			pos = end
		case c == 't' || c == 'f' || c == 'n':
			end := pos + 1
			for end < len(b) && b[end] >= 'a' && b[end] <= 'z' {
				end++
			}
			if key != nil {
				visit(member{key: key, start: pos, end: end, kind: 't'})
			}
			pos = end
		default:
			return errSyntax
		}
		// After a value: a separator, the end of containers, or the end.
		for {
			pos = skipSpace(b, pos)
			if len(stack) == 0 {
				if pos != len(b) {
					return errSyntax
				}
				return nil
			}
			if pos >= len(b) {
				return errSyntax
			}
			top := stack[len(stack)-1]
			switch {
			case b[pos] == ',':
				pos = skipSpace(b, pos+1)
			case top == '{' && b[pos] == '}', top == '[' && b[pos] == ']':
				stack = stack[:len(stack)-1]
				pos++
				continue
			default:
				return errSyntax
			}
			break
		}
	}
}

// scanString returns the index just after the JSON string that starts at
// b[pos] ('"').
func scanString(b []byte, pos int) (int, error) {
	for i := pos + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errSyntax
}

func skipSpace(b []byte, pos int) int {
	for pos < len(b) && (b[pos] == ' ' || b[pos] == '\t' || b[pos] == '\n' || b[pos] == '\r') {
		pos++
	}
	return pos
}

// keyName returns a member's key as a Go string, unescaping it if needed.
func keyName(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if json.Unmarshal(q, &s) != nil {
		return string(raw)
	}
	return s
}

// secretMember reports whether m is a credential: a string or number under
// a name Name matches. Booleans and null carry no secret; an object or
// array under such a name is data (a JSON schema property called
// "password", say) and is scanned member by member instead.
func secretMember(m member) bool {
	if m.kind == 't' || m.kind == '"' && m.end-m.start <= 2 {
		return false
	}
	return Name(keyName(m.key))
}

// memberValue returns a secret member's string value, unescaped, or ""
// for a number: a number is blanked by name, but not learned, since
// blanking its digits wherever they appear would break JSON and numbers.
func memberValue(b []byte, m member) string {
	raw := b[m.start:m.end]
	if m.kind != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw[1 : len(raw)-1])
	}
	return s
}

// placeholderJSON is what replaces a secret member's value.
var placeholderJSON = []byte(`"` + Placeholder + `"`)

// scrubMembers returns b with the value of every secret member replaced by
// "REDACTED", or b itself when it has none or is not JSON.
func scrubMembers(b []byte) []byte {
	if !mayNameSecret(b) || !json.Valid(b) {
		return b
	}
	w := blanker{src: b}
	_ = scanMembers(b, func(m member) {
		if secretMember(m) {
			w.put(m.start, m.end, placeholderJSON)
		}
	})
	return w.done()
}

// mayNameSecret is a quick test that the JSON text b may have a member
// whose name Name matches, so that JSON without any (audio frames,
// transcripts) is neither validated nor scanned. It looks only at the
// strings just before a ':' (the keys, in valid JSON), without
// allocating; a key with an escape, which could spell any name, makes it
// true.
func mayNameSecret(b []byte) bool {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], ':')
		if j < 0 {
			return false
		}
		colon := i + j
		i = colon + 1
		end := colon - 1
		for end >= 0 && (b[end] == ' ' || b[end] == '\t' || b[end] == '\n' || b[end] == '\r') {
			end--
		}
		if end < 0 || b[end] != '"' {
			continue // a ':' inside a string value
		}
		open := bytes.LastIndexByte(b[:end], '"')
		if open < 0 {
			continue
		}
		if open > 0 && b[open-1] == '\\' {
			return true // an escaped quote inside the key
		}
		if keySecret(b[open+1 : end]) {
			return true
		}
	}
	return false
}

// keySecret reports whether a raw key may be a credential's name: Name
// matches it, or it holds an escape.
func keySecret(key []byte) bool {
	var buf [64]byte
	n := 0
	for _, c := range key {
		switch {
		case c == '\\':
			return true
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '-' || c == '_' || c == '.' || c == ' ':
			continue
		}
		if n == len(buf) {
			return Name(string(key)) // a long key: the slow way
		}
		buf[n] = c
		n++
	}
	return secretNorm(string(buf[:n]))
}
