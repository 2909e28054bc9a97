package scrub

import (
	"bytes"
	"strings"
)

// Name reports whether a JSON member, form field or multipart field called
// name carries a credential: an API key, a secret, a password, a token, a
// signature, a cookie, an authorization. Case and the separators '-', '_',
// '.' and ' ' are ignored, so "api_key", "apiKey" and "API-Key" all match.
// Counts and limits such as "max_tokens", "token_count" and "tokens_used"
// are parameters, not credentials, and do not match.
func Name(name string) bool { return secretNorm(normName(name)) }

// secretNorm is Name for a name already normalised by normName.
func secretNorm(n string) bool {
	switch {
	case strings.Contains(n, "apikey"), strings.Contains(n, "secret"),
		strings.Contains(n, "password"), strings.Contains(n, "passwd"),
		strings.Contains(n, "credential"), strings.Contains(n, "privatekey"),
		strings.Contains(n, "authorization"), strings.Contains(n, "cookie"),
		strings.Contains(n, "signature"),
		n == "auth", n == "key", n == "sig", n == "bearer", n == "pass", n == "pwd":
		return true
	case strings.Contains(n, "token"):
		return !strings.Contains(n, "tokens") && !strings.Contains(n, "tokencount") &&
			!strings.Contains(n, "tokenlimit")
	}
	return false
}

// ParamName reports whether a URL query parameter called name carries a
// credential: what Name matches, and any name containing "key" (a signed
// URL's "X-Goog-Key", a "client_session_key").
func ParamName(name string) bool {
	return Name(name) || strings.Contains(normName(name), "key")
}

// EnvName reports whether an environment variable called name holds a
// credential: what Name matches (OPENAI_API_KEY, TWILIO_AUTH_TOKEN,
// AWS_SECRET_ACCESS_KEY, DB_PASSWORD), and any name that ends in "key"
// (STRIPE_KEY, LIVEKIT_KEY).
func EnvName(name string) bool {
	// Normalised on the stack: AddEnv checks every variable of the
	// environment for every request the cache sees.
	var buf [64]byte
	if len(name) > len(buf) {
		n := normName(name)
		return secretNorm(n) || strings.HasSuffix(n, "key")
	}
	b := buf[:0]
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+('a'-'A'))
		case c == '-' || c == '_' || c == '.' || c == ' ':
		default:
			b = append(b, c)
		}
	}
	return secretNorm(string(b)) || bytes.HasSuffix(b, []byte("key"))
}

// HeaderName reports whether an HTTP header called name carries a
// credential: what Name matches, any header whose name contains "key",
// "token", "secret" or "auth" (Authorization, Proxy-Authorization,
// X-Api-Key, Xi-Api-Key, X-Auth-Token, Api-Key), Cookie and Set-Cookie,
// and OpenAI's account headers.
func HeaderName(name string) bool {
	n := normName(name)
	return Name(name) || strings.Contains(n, "key") || strings.Contains(n, "token") ||
		strings.Contains(n, "secret") || strings.Contains(n, "auth") ||
		n == "openaiorganization" || n == "openaiproject"
}

// normName lower-cases name and drops '-', '_', '.' and ' '.
func normName(name string) string {
	clean := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.' || c == ' ' {
			clean = false
			break
		}
	}
	if clean {
		return name
	}
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+('a'-'A'))
		case c == '-' || c == '_' || c == '.' || c == ' ':
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
