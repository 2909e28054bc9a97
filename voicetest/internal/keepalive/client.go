package keepalive

import "net/http"

// NewClient returns an HTTP client for calls to a model's endpoint (what
// voicetest/llm and voicetest/speech use when their caller supplies
// none): a Transport, which keeps connections alive inside and
// outside testing/synctest bubbles with no goroutine of its own while a
// request runs, and hands what it does not make itself (proxied requests,
// https outside a bubble) to a bubbleAwareTransport with
// http.DefaultTransport's settings.
func NewClient() *http.Client {
	var pooled *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		pooled = dt.Clone()
	} else {
		pooled = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	fresh := pooled.Clone()
	fresh.DisableKeepAlives = true
	return &http.Client{Transport: newTransport(&bubbleAwareTransport{pooled: pooled, fresh: fresh})}
}

// bubbleAwareTransport sends a request through pooled, which keeps idle
// connections alive for the next call, except inside a testing/synctest
// bubble, where it uses fresh: a new connection per request, closed when
// the response is done. An idle kept-alive connection parks a goroutine
// on a network read, which is not durably blocked; inside a bubble
// (voicetest.Scenario runs in-process agents in one, and Users, judges and
// engines record their calls there) that goroutine would stop virtual
// time and keep the bubble from ever finishing, and a connection made in
// one bubble must not be used from outside it. A call inside a bubble
// therefore never takes nor leaves a pooled connection.
//
// See inBubble for how a request made inside a bubble is told apart.
type bubbleAwareTransport struct {
	pooled, fresh *http.Transport
}

// RoundTrip implements http.RoundTripper.
func (t *bubbleAwareTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if inBubble() {
		return t.fresh.RoundTrip(req)
	}
	return t.pooled.RoundTrip(req)
}

// CloseIdleConnections closes the pooled connections that are idle
// (http.Client.CloseIdleConnections calls it).
func (t *bubbleAwareTransport) CloseIdleConnections() { t.pooled.CloseIdleConnections() }
