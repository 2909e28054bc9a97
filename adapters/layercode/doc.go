// Package layercode reaches a voice agent hosted on LayerCode, as the
// agent under test: it authorizes a session through the customer's
// backend, then plays the browser SDK's side of LayerCode's frontend
// WebSocket (New, Agent).
package layercode
