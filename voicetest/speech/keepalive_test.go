package speech

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultClientHasNoKeepAlive checks the transport the OpenAI engines
// use when the caller gives no HTTP client: no idle connection may outlive
// a request, or it stops a synctest bubble's clock.
func TestDefaultClientHasNoKeepAlive(t *testing.T) {
	tr, ok := noKeepAliveClient().Transport.(*http.Transport)
	require.True(t, ok, "the default client's transport is an *http.Transport")
	assert.True(t, tr.DisableKeepAlives)
	assert.NotNil(t, tr.Proxy, "the proxy settings of http.DefaultTransport are kept")
}
