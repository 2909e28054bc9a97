// Package wire is what every adapter that reaches its agent over a
// WebSocket shares: the settings of the connection (WSOptions), the errors
// it reports (FrameError), its wire capture (CaptureRecord, ReadCapture),
// the answer to client tool calls (ToolHandler), and the machinery the
// protocol packages under adapters/ are built on: Dial and Conn (one reader
// goroutine, keepalive, bounded writes, capture of every frame, a Close
// that releases everything), the refusal of plain-text URLs (RequireTLS),
// the scrubbing of credentials from URLs and errors, the streaming
// resampling of the user's audio (Upstream) and the checks every Conn
// makes of what it is asked to send.
//
// A test imports a protocol's package (adapters/twilio, adapters/realtime,
// …) and this one only to set WSOptions in a composite literal or to
// inspect a FrameError or a capture. The in-process adapters
// (adapters/handler, adapters/composable) do not use it, so a test of an
// in-process agent compiles no WebSocket library.
package wire
