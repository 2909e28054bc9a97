package llm

import (
	"net/http"

	"github.com/voicetest-go/voicetest/voicetest/internal/openaihttp"
)

// userAgent is the User-Agent of the Client's requests.
const userAgent = "voicetest-llm/1 (Go)"

// APIError is an error status answered by the endpoint, with the error
// object of its body (OpenAI's {"error": {"message", "type", "param",
// "code"}}) when it sent one: its StatusCode, its Message, Type, Param and
// Code (code as text, whether it was sent as a string or a number), and
// the request's Method and URL. Complete's errors wrap it: use errors.As
// to read the status. It is the same type as speech.APIError: the Client
// and the OpenAI speech engines send their requests through one
// implementation of OpenAI's retries, errors and bounds
// (voicetest/internal/openaihttp), which replaced openai-go's.
type APIError = openaihttp.APIError

// newEndpoint returns the endpoint of chat completions under base.
func newEndpoint(h *http.Client, base, key string, maxRetries int) (*openaihttp.Endpoint, error) {
	return openaihttp.New(h, openaihttp.Config{
		Base: base, Path: "chat/completions", Key: key,
		UserAgent: userAgent, ContentType: "application/json", Accept: "application/json",
		MaxRetries: maxRetries,
	})
}
