package scrub

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"unicode/utf8"
)

// The credentials any text shows by where they stand, with nothing
// learned: the token after an HTTP authentication scheme, and the value of
// a parameter named like a credential. Each rule looks for one byte with
// bytes.IndexByte (' ' and '='), so text without them (a frame's base64
// audio) costs one vectorised scan per rule. Binary data, where those
// bytes come by chance, is not read as text (Scrubber.Binary).

// minToken is the length below which what follows "Bearer " or "Basic "
// is not taken for a credential.
const minToken = 8

// maxParamName is the longest parameter name looked for before a '='.
const maxParamName = 64

// scrubText blanks the credentials b shows by position (see
// scrubSchemes and scrubParams). It returns b itself when there is none.
func scrubText(b []byte) []byte {
	return scrubParams(scrubSchemes(b))
}

// scrubSchemes blanks the credential that follows the HTTP authentication
// scheme "Bearer" or "Basic" (any case, as a word, then spaces), as an
// Authorization header, a curl command or an error message quotes it. To
// tell a credential from prose ("the bearer instruments", "a basic
// question"), a Basic credential must be base64 of printable text with a
// ':' (user:password), and a Bearer one at least 8 bytes with a digit
// or a punctuation mark, or 20 letters and more. A trailing '.' is
// taken for the end of a sentence.
func scrubSchemes(b []byte) []byte { return scrubAt(b, ' ', schemeToken) }

// schemeToken finds the credential after the space at b[sp].
func schemeToken(b []byte, sp, _ int) (start, end int, ok bool) {
	if sp == 0 || b[sp-1]|0x20 != 'r' && b[sp-1]|0x20 != 'c' {
		return 0, 0, false // the quick test: not the end of "bearer" or "basic"
	}
	basic := wordBefore(b, sp, "basic")
	if !basic && !wordBefore(b, sp, "bearer") {
		return 0, 0, false
	}
	start = sp + 1
	for start < len(b) && b[start] == ' ' {
		start++
	}
	end = start
	for end < len(b) && tokenByte(b[end]) {
		end++
	}
	if end > start && b[end-1] == '.' {
		end--
	}
	return start, end, credentialToken(b[start:end], basic)
}

// scrubAt blanks, for each byte c of b, the range find returns (with ok),
// looking for the next c after that range. find gets b, the index of c,
// and the end of the range blanked before, which it must not reach back
// over.
func scrubAt(b []byte, c byte, find func(b []byte, at, last int) (start, end int, ok bool)) []byte {
	w := blanker{src: b}
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			break
		}
		at := i + j
		i = at + 1
		if start, end, ok := find(b, at, w.last); ok {
			w.put(start, end, placeholder)
			i = end
		}
	}
	return w.done()
}

// wordBefore reports whether b[:end] ends with the word w (lower-case
// ASCII), in any case, with no letter or digit just before it.
func wordBefore(b []byte, end int, w string) bool {
	start := end - len(w)
	if start < 0 {
		return false
	}
	for k := range len(w) {
		c := b[start+k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[k] {
			return false
		}
	}
	return start == 0 || !alnum(b[start-1])
}

// credentialToken reports whether tok, after "Basic " (basic) or
// "Bearer ", is a credential rather than a word of prose.
func credentialToken(tok []byte, basic bool) bool {
	if len(tok) < minToken || string(tok) == Placeholder {
		return false
	}
	if basic {
		enc := base64.StdEncoding
		if len(tok)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		dec, err := enc.DecodeString(string(tok))
		if err != nil || !utf8.Valid(dec) || bytes.IndexByte(dec, ':') < 0 {
			return false
		}
		for _, c := range dec {
			if c < ' ' || c == 0x7f {
				return false
			}
		}
		return true
	}
	if len(tok) >= 20 {
		return true
	}
	for _, c := range tok {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return true
		}
	}
	return false
}

// scrubParams blanks the value of every parameter named like a credential
// (ParamName) in text: name=value after '?', '&', ';', a space, a line
// break, a quote, the start of the text, or a JSON escape (\n, \t, \r,
// \u0026). So a URL's query inside an error message or a JSON string, a
// form body and a log line's key=value pairs lose their credentials. The
// value is the bytes a query value holds unescaped (letters, digits,
// "-._~%+/="), but not a trailing '.'; a value that starts with '='
// (base64 padding) is not one.
func scrubParams(b []byte) []byte { return scrubAt(b, '=', paramValue) }

// paramValue finds the value of the credential parameter whose '=' is
// b[eq].
func paramValue(b []byte, eq, last int) (start, end int, ok bool) {
	v := eq + 1
	if v >= len(b) || !valueByte(b[v]) || b[v] == '=' {
		return 0, 0, false
	}
	k := paramStart(b, last, eq)
	if k < 0 {
		return 0, 0, false
	}
	end = v
	for end < len(b) && valueByte(b[end]) {
		end++
	}
	if end > v+1 && b[end-1] == '.' {
		end--
	}
	return v, end, string(b[v:end]) != Placeholder && paramSecret(b[k:eq])
}

// placeholder is Placeholder as bytes.
var placeholder = []byte(Placeholder)

// blanker copies a text with ranges of it replaced, in order, and
// allocates only once something is replaced.
type blanker struct {
	src  []byte
	out  []byte
	last int // the end of the latest range replaced
}

// put replaces src[start:end] with with; start is at least the end of the
// range put before.
func (w *blanker) put(start, end int, with []byte) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.src))
	}
	w.out = append(w.out, w.src[w.last:start]...)
	w.out = append(w.out, with...)
	w.last = end
}

// done returns the text: src itself when nothing was replaced.
func (w *blanker) done() []byte {
	if w.out == nil {
		return w.src
	}
	return append(w.out, w.src[w.last:]...)
}

// paramStart returns where the name of the parameter whose '=' is b[eq]
// starts, or -1 when what precedes eq is not a parameter's name; it looks
// no further back than from.
func paramStart(b []byte, from, eq int) int {
	k := eq
	for k > from && eq-k < maxParamName && nameByte(b[k-1]) {
		k--
	}
	if k == eq {
		return -1
	}
	if k == 0 {
		return 0
	}
	switch b[k-1] {
	case '?', '&', ';', ' ', '\t', '\r', '\n', '"', '\'':
		return k
	case '\\': // a JSON escape just before the name
		switch {
		case b[k] == 'n' || b[k] == 't' || b[k] == 'r':
			k++
		case bytes.HasPrefix(b[k:eq], []byte("u0026")):
			k += len("u0026")
		default:
			return -1
		}
		if k == eq {
			return -1
		}
		return k
	}
	return -1
}

// paramSecret is ParamName for a raw parameter name, without allocating
// for a short one without escapes.
func paramSecret(name []byte) bool {
	if len(name) > maxParamName || bytes.IndexByte(name, '%') >= 0 {
		n := string(name)
		if dec, err := url.QueryUnescape(n); err == nil {
			n = dec
		}
		return ParamName(n)
	}
	var buf [maxParamName]byte
	n := 0
	for _, c := range name {
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '-' || c == '_' || c == '.':
			continue
		}
		buf[n] = c
		n++
	}
	norm := buf[:n]
	return bytes.Contains(norm, []byte("key")) || secretNorm(string(norm))
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// tokenByte reports a byte of an HTTP credential (RFC 9110 token68).
func tokenByte(c byte) bool {
	return alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '='
}

// nameByte reports a byte of a parameter's name.
func nameByte(c byte) bool {
	return alnum(c) || c == '_' || c == '.' || c == '-' || c == '%'
}

// valueByte reports a byte of a parameter's value as a query carries it.
func valueByte(c byte) bool {
	return alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '%' || c == '+' || c == '/' || c == '='
}
